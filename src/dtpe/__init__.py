"""dtpe: positional encodings and length generalization in Decision Transformers on Key-Door
mazes."""

import sys

from dtpe.cli import main

sys.exit(main())

# One short device call (issue 36), ~2 minutes on an H200: nine study-size trainings of two
# epochs at once, in fp32 sharing the GPU in turns, in fp32 under CUDA's multi-process service
# (MPS), and in bf16 autocast under MPS; then the nine models' evaluations at once.
# From the repository root on the GPU machine, .whl carried (see scripts/study_gpu.py):
#   bash bench/gpu_probe.sh
# Measured 2026-11-26 on an H200 (runs/study/attempts/2026-11-26-h200/probe.txt: an earlier
# version, fp32 with TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1, which changed nothing measurable).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1
W=/tmp/probe; mkdir -p $W
overlay() {  # $1: precision
  printf 'base: %s\ntrain: {epochs: 2, precision: %s}\nevaluate: {precision: %s}\ncompute: {numerics: native}\n' \
    "${PARAMS:-$PWD/params-study.yaml}" $1 $1 > $W/$1.yaml
}
overlay fp32; overlay bf16
python3 -m dtpe data --params $W/fp32.yaml --out $W/data | tail -1
train9() {  # $1: tag, $2: precision
  t0=$SECONDS
  for v in learned sinusoidal rope; do for s in 42 123 456; do
    timeout 70 python3 -m dtpe train --params $W/$2.yaml --variant $v --seed $s --data $W/data --threads 1 \
      --out $W/$1/m/${v}_s$s --metrics $W/$1/r/${v}_s$s > $W/$1_${v}_s$s.log 2>&1 &
  done; done; wait
  echo "$1: nine trainings of 2 epochs: $((SECONDS - t0)) s; rope_s42's epochs:"
  grep -h '^epoch' $W/$1_rope_s42.log | grep -o 'epoch=[0-9]*\|val_success=[0-9.]*\|seconds=.*' | paste -sd' '
}
train9 fp32_turns fp32
if ! command -v nvidia-cuda-mps-control >/dev/null; then echo "mps: no nvidia-cuda-mps-control"; exit; fi
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mpslog
mkdir -p /tmp/mps /tmp/mpslog && nvidia-cuda-mps-control -d
timeout 40 python3 -c "import torch; torch.zeros(1, device='cuda')" || { echo "mps: cuda failed"; exit; }
train9 fp32_mps fp32
train9 bf16_mps bf16
t0=$SECONDS
for v in learned sinusoidal rope; do for s in 42 123 456; do
  timeout 90 python3 -m dtpe evaluate --params $W/bf16.yaml --variant $v --seed $s --data $W/data \
    --threads 1 --model $W/bf16_mps/m/${v}_s$s --out-test $W/e/t_$v$s.csv --out-grid $W/e/g_$v$s.csv \
    --out-context $W/e/c_$v$s.csv > $W/eval_${v}_s$s.log 2>&1 && echo "eval ${v}_s$s done $((SECONDS - t0)) s" &
done; done; wait
echo "nine evaluations at once (bf16, MPS; untrained models fail every episode: the slowest case): $((SECONDS - t0)) s"
echo quit | nvidia-cuda-mps-control

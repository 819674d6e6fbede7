#!/usr/bin/env bash
# Launch -> first screen, as a user sees it: `fieldqa samples` in a detached tmux pane (120x40),
# the pane polled every 10 ms until the Ask screen shows its status line ("opening the library…",
# painted before the models load); seconds from launch, five runs. Needs tmux and a built
# samples index (`make run` once). Usage: bash bench/first_screen.sh
cd "$(dirname "$0")/.."
for run in 1 2 3 4 5; do
  S="fs-$$-$run"
  t0=$(date +%s.%N)
  tmux new-session -d -s "$S" -x 120 -y 40 ".venv/bin/fieldqa samples"
  while ! tmux capture-pane -p -t "$S" 2>/dev/null | grep -q "opening the library"; do sleep 0.01; done
  t1=$(date +%s.%N)
  echo "run $run: first screen $(echo "$t1 - $t0" | bc) s"
  sleep 3
  tmux capture-pane -p -t "$S" | grep -o "ready · [0-9]* documents" | head -1
  tmux kill-session -t "$S"
  sleep 1
done

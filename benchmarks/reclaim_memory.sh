#!/usr/bin/env bash
# By hand (not in run_all: it takes ~11 min and one figure): does a finished class's memory go
# back to the machine (attnviz/ui/memory.py)? Starts a server on 127.0.0.1:8630, runs 20
# simulated students at the editing limits for 60 s, prints the server's RSS every 30 s for
# 4 min, makes one short visit (its disconnect lets Streamlit remove the expired sessions),
# then prints the RSS every 30 s for 5.5 min more. Run from the repository root:
#     bash benchmarks/reclaim_memory.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=$(mktemp -d)
python -m streamlit run app.py --server.port 8630 --server.address 127.0.0.1 \
    --server.headless true --browser.gatherUsageStats false --server.fileWatcherType none \
    > "$OUT/server.log" 2>&1 &
SRV=$!
trap 'kill $SRV 2>/dev/null || true' EXIT
sleep 8
rss() { echo "$(date +%T) $1: RSS $(( $(awk '/VmRSS/ {print $2}' /proc/$SRV/status) / 1024 )) MiB"; }
rss "idle"
python benchmarks/ws_load.py --url http://127.0.0.1:8630 --students 20 --seconds 60 \
    --scenario limits --classes 1 --json "$OUT/class.json" > "$OUT/class.log" 2>&1
rss "class ended (t0)"
for i in $(seq 1 8); do sleep 30; rss "t0 + $((i * 30)) s"; done
python benchmarks/ws_load.py --url http://127.0.0.1:8630 --students 1 --seconds 3 \
    --scenario default --classes 1 --json "$OUT/visit.json" > /dev/null 2>&1
rss "after one visit"
for i in $(seq 1 11); do sleep 30; rss "visit + $((i * 30)) s"; done

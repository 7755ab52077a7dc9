# bash completion for cltrace, cltrace-report and cltrace-view
# (installed as share/bash-completion/completions/cltrace and linked as the other two)

_cltrace()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    case $prev in
        -o) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    esac
    case ${COMP_WORDS[1]} in
        ctl)              # cltrace ctl PID COMMAND
            case $COMP_CWORD in
                2) COMPREPLY=($(compgen -W "$(pgrep -u "$(id -u)" 2> /dev/null)" -- "$cur")) ;;
                3) COMPREPLY=($(compgen -W "start stop snapshot status" -- "$cur")) ;;
            esac
            return ;;
        replay|tune)      # a capture folder, or their options
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "--platform --device --local --repeat --tolerance --check --emit-c --list
                                         --round-global --format -o --help" -- "$cur"))
            else
                COMPREPLY=($(compgen -d -- "$cur"))
            fi
            return ;;
    esac
    local i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            --) _command_offset $((i + 1)); return ;;
            -*) ;;
            *) [ "${COMP_WORDS[i-1]}" = -o ] || { _command_offset "$i"; return; } ;;
        esac
    done
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "-o -q --no-children --sample --fingerprint --capture= --window= --every= --ring= --snapshot-on= -h --help --" -- "$cur"))
    else
        COMPREPLY=($(compgen -c -- "$cur"))
        [ "$COMP_CWORD" -ne 1 ] || COMPREPLY+=($(compgen -W "probe replay tune ctl" -- "$cur"))
    fi
}

_cltrace_report()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    case $prev in
        --format) COMPREPLY=($(compgen -W "text json markdown junit html sarif github" -- "$cur")); return ;;
        --explain) COMPREPLY=($(compgen -W "cost" -- "$cur")); return ;;
        --fail-on) COMPREPLY=($(compgen -W "info warning error" -- "$cur")); return ;;
        -o) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --small-bytes|--small-count|--min-wg|--min-occupancy|--threshold|--jobs|--ranks) return ;;
        --tuned) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--format -o --fail-on --small-bytes --small-count --min-wg --min-occupancy --tuned
                                 --threshold --jobs --ranks-only --ranks --explain --rules --help" -- "$cur"))
    else
        COMPREPLY=($(compgen -W "diff diverge merge" -- "$cur") $(compgen -f -X '!*.pftrace?(.gz)' -- "$cur") $(compgen -d -- "$cur"))
    fi
}

_cltrace_view()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    case $prev in
        --timeout|--port) return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--no-open --timeout --port --help" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -X '!*.pftrace?(.gz)' -- "$cur") $(compgen -d -- "$cur"))
    fi
}

complete -F _cltrace cltrace
complete -F _cltrace_report cltrace-report
complete -F _cltrace_view cltrace-view

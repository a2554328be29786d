# bash completion for xagent-sandboxctl(1)                 -*- shell-script -*-
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Commands, options, and the caller's own sandbox names and snapshot ids, asked of the
# service (xagent-sandboxctl --json list / snapshots); when the service does not
# answer within a few seconds there is quietly nothing to offer.

# One line per command: its name, the kinds of its arguments in order (comma-separated,
# "-" for none), and its own options. Kinds: sandbox, snapshot, file, python (a Python
# version of the fingerprint), copy (cp's ends: NAME: of a sandbox or a local file;
# the second one the other kind than the first), remote (NAME:PATH of cat, put, ls,
# rm: the sandboxes as NAME:), word (anything; nothing offered). An option taking a value is written --option=KIND; @spec stands
# for the spec options of create and verify. A new command is one more line here
# (tests/test_completion.py holds this table equal to `xagent-sandboxctl --help`).
_xagent_sandboxctl_commands=(
        'list             -                 --no-legend --label=word'
        'snapshots        -                 --no-legend'
        'create           word              @spec --label=word --idle-timeout=word --on-idle=word --idle-counts-processes=word --expire-after=word --pull=word --runtime=word --egress=word --allow=word'
        'ensure           word              @spec --label=word --idle-timeout=word --on-idle=word --idle-counts-processes=word --expire-after=word --pull=word --runtime=word --egress=word --allow=word --recreate --stop-timeout=word'
        'claim            -                 @spec --label=word --idle-timeout=word --on-idle=word --idle-counts-processes=word --expire-after=word --pull=word --runtime=word --egress=word --allow=word --name-prefix=word'
        'inspect          sandbox           --fresh'
        'verify           sandbox           @spec'
        'start            sandbox           '
        'stop             sandbox           --timeout=word --force'
        'pause            sandbox           '
        'egress           sandbox,word      '
        'resume           sandbox           '
        'delete           sandbox           '
        'acquire          sandbox           '
        'lifetimes        sandbox           --idle-timeout=word --on-idle=word --idle-counts-processes=word --expire-after=word'
        'snapshot         sandbox,word      '
        'delete-snapshot  snapshot          '
        'exec             sandbox           --tty --detach --env=word --workdir=word --timeout=word'
        'ps               sandbox           '
        'output           word              --follow'
        'attach           word              '
        'shell            sandbox           '
        'cp               copy,copy         '
        'cat              remote            '
        'put              file,remote       --mode=word --append --parents'
        'ls               remote            --depth=word --limit=word'
        'rm               remote            --recursive'
        'usage            sandbox           '
        'policy           -                 '
        'pull             word              '
        'fingerprint      file              --config=file --python=python'
)
_xagent_sandboxctl_spec_options='--image=word --snapshot=snapshot --workdir=word --cpus=word
        --memory=word --env=word --volume=word --port=word --isolated --spec=file'
# Accepted before and after the command (--version only before it).
_xagent_sandboxctl_global_options='--json --no-ask-password --owner=user --help -h'

# The caller's sandbox names (list) or snapshot ids (snapshots), one per line, from the
# JSON the service returns: json-c escapes only '"' and '\' in them (names carry no
# control characters).
__xagent_sandboxctl_names() {
        local verb=$1 key=$2 line value
        timeout 5 "${COMP_WORDS[0]}" --no-ask-password --json "$verb" 2>/dev/null </dev/null |
        while IFS= read -r line; do
                [[ $line =~ ^[[:space:]]*\"$key\":\"(.*)\",?$ ]] || continue
                value=${BASH_REMATCH[1]//\\\\/$'\001'}
                value=${value//\\\"/\"}
                printf '%s\n' "${value//$'\001'/\\}"
        done
}

# A cp argument that names a sandbox's side: NAME:PATH, NAME without a '/'.
__xagent_sandboxctl_is_remote() {
        [[ $1 == *:* && ${1%%:*} != */* ]]
}

# COMPREPLY for one end of cp; other: the first end, when this is the second.
__xagent_sandboxctl_complete_copy() {
        local cur=$1 other=$2 name word
        local -a names
        # Inside a sandbox there is nothing to list without running something there.
        __xagent_sandboxctl_is_remote "$cur" && return
        if [[ -z $other ]] || ! __xagent_sandboxctl_is_remote "$other"; then
                mapfile -t names < <(__xagent_sandboxctl_names list name)
                word=$(dequote "$cur") || word=$cur
                for name in "${names[@]}"; do
                        [[ $name == "$word"* ]] && COMPREPLY+=("$(printf '%q' "$name"):")
                done
        fi
        if [[ -z $other ]] || __xagent_sandboxctl_is_remote "$other"; then
                local -a sandboxes=("${COMPREPLY[@]}")
                COMPREPLY=()
                # From a sandbox, the local end is an existing directory.
                if [[ -n $other ]]; then _filedir -d; else _filedir; fi
                COMPREPLY=("${sandboxes[@]}" "${COMPREPLY[@]}")
        fi
        # NAME: goes on with the path in the sandbox: no space after it.
        [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *: ]] && compopt -o nospace 2>/dev/null
}

# COMPREPLY: the words offered for one argument of the given kind.
__xagent_sandboxctl_complete_kind() {
        local kind=$1 cur=$2 name
        local -a names
        case $kind in
        user)
                COMPREPLY=($(compgen -u -- "$cur"))
                ;;
        sandbox | snapshot)
                if [[ $kind == sandbox ]]; then
                        mapfile -t names < <(__xagent_sandboxctl_names list name)
                else
                        mapfile -t names < <(__xagent_sandboxctl_names snapshots snapshot_id)
                fi
                local word
                word=$(dequote "$cur") || word=$cur
                for name in "${names[@]}"; do
                        [[ $name == "$word"* ]] && COMPREPLY+=("$(printf '%q' "$name")")
                done
                __ltrim_colon_completions "$cur"
                ;;
        file)
                _filedir
                ;;
        python)
                COMPREPLY=($(compgen -W '3.11 3.12 3.13 3.14' -- "$cur"))
                ;;
        copy)
                __xagent_sandboxctl_complete_copy "$cur" "$3"
                ;;
        remote)
                # Inside a sandbox there is nothing to list without a call per word.
                __xagent_sandboxctl_is_remote "$cur" && return
                mapfile -t names < <(__xagent_sandboxctl_names list name)
                local word
                word=$(dequote "$cur") || word=$cur
                for name in "${names[@]}"; do
                        [[ $name == "$word"* ]] && COMPREPLY+=("$(printf '%q' "$name"):")
                done
                ((${#COMPREPLY[@]} > 0)) && compopt -o nospace 2>/dev/null
                ;;
        esac
}

_xagent_sandboxctl() {
        local cur prev words cword
        _init_completion -n := || return

        local line c k o command= kinds= options= i n_args=0 word kind
        local -a arg_kinds args=()
        local -A takes_value=() value_kind=()

        # The global options are known before the command is.
        for word in $_xagent_sandboxctl_global_options; do
                if [[ $word == *=* ]]; then
                        takes_value[${word%%=*}]=1 value_kind[${word%%=*}]=${word#*=}
                else
                        takes_value[$word]=0
                fi
        done

        # The command: the first word that is neither an option nor an option's value.
        local skip=0
        for ((i = 1; i < cword; i++)); do
                word=${words[i]}
                if ((skip)); then
                        skip=0
                elif [[ $word == -- ]]; then
                        break
                elif [[ $word == -* ]]; then
                        [[ $word != *=* && ${takes_value[$word]-0} == 1 ]] && skip=1
                elif [[ -z $command ]]; then
                        for line in "${_xagent_sandboxctl_commands[@]}"; do
                                read -r c k o <<<"$line"
                                if [[ $c == "$word" ]]; then
                                        command=$c kinds=$k options=${o//@spec/$_xagent_sandboxctl_spec_options}
                                        break
                                fi
                        done
                        [[ -n $command ]] || return     # an unknown command
                        for o in $options; do
                                if [[ $o == *=* ]]; then
                                        takes_value[${o%%=*}]=1 value_kind[${o%%=*}]=${o#*=}
                                else
                                        takes_value[$o]=0
                                fi
                        done
                else
                        args+=("$word")
                        ((n_args++))
                fi
        done

        # The value of an option: --opt VALUE or --opt=VALUE.
        if [[ ${takes_value[$prev]-0} == 1 ]]; then
                __xagent_sandboxctl_complete_kind "${value_kind[$prev]}" "$cur"
                return
        fi
        if [[ $cur == --*=* && ${takes_value[${cur%%=*}]-0} == 1 ]]; then
                kind=${value_kind[${cur%%=*}]}
                cur=${cur#*=}
                __xagent_sandboxctl_complete_kind "$kind" "$cur"
                return
        fi

        if [[ $cur == -* ]]; then
                local offered=
                for o in $_xagent_sandboxctl_global_options; do offered+=" ${o%%=*}"; done
                if [[ -z $command ]]; then
                        offered+=' --version'
                else
                        for o in $options; do offered+=" ${o%%=*}"; done
                fi
                COMPREPLY=($(compgen -W "$offered" -- "$cur"))
                return
        fi

        if [[ -z $command ]]; then
                for line in "${_xagent_sandboxctl_commands[@]}"; do
                        read -r c _ <<<"$line"
                        [[ $c == "$cur"* ]] && COMPREPLY+=("$c")
                done
                return
        fi

        IFS=, read -r -a arg_kinds <<<"$kinds"
        kind=${arg_kinds[n_args]-}
        [[ -n $kind && $kind != - ]] && __xagent_sandboxctl_complete_kind "$kind" "$cur" "${args[0]-}"
        return 0
} &&
        complete -F _xagent_sandboxctl xagent-sandboxctl

# ex: filetype=sh

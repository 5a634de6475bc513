#!/usr/bin/env python3
"""Differential generator: commands whose effect under bash differs from
their effect under dash (Debian's and Proxmox VE's /bin/sh), one family per
kind of construct where the two shells disagree, written from bash(1) and
dash(1): quoting forms, echo and printf escapes, arithmetic, [[ ]], brace
expansion, arrays, parameter expansion forms, here-strings, redirection
forms, process substitution, function definitions, local, source and the
dot command, let, special variables and parameters, globbing options,
aliases, traps, shell options, builtins bash has and dash lacks, and case
fall-through.

Every command runs in a directory of its own, so that what it writes is
part of its effect: the test gives each run a fresh one in place of @D@.
Word-producing constructs are put in several places where a word is used
(an argument, an assignment, a redirection's target, a command's name, a
case pattern): the same construct, read by the wrong shell, is another
word in each of them.  Nothing depends on the clock, the host name or the
process: values that do ($RANDOM, $SECONDS, $BASHPID) are only tested for
being set.

Usage: shelldiff.py
Prints NUL-terminated fields, three per case: family, name, command.
tests/integration/transport_test.c (scenario shelldiff) runs each case
under bash (the shell the classifier models) and dash here, requires them
to differ, and then checks on the rig's host, VM and container that the
effect is bash's, and dash's through /bin/sh (so the check can fail).
"""
import sys

PREFIX = "mkdir -p @D@ && cd @D@ || exit 99\n"
cases = []


def case(family, name, body):
    cases.append((family, name, PREFIX + body))


# ---- words: each construct, then the places it is used in ---------------------

# construct, setup run before it (may be ""), a word to compare it with in
# a case pattern (what bash makes of it)
WORDS = {
    "ansi-c quoting": [
        ("$'\\x41'", "", "A"),
        ("$'\\101'", "", "A"),
        ("$'\\u0041'", "", "A"),
        ("$'a\\tb'", "", None),
        ("$'it\\'s'", "", "it's"),
        ("$'\\x2e\\x2fcron.d'", "", "./cron.d"),
        ("$'\\cA'", "", None),
        ("$'\\e[0m'", "", None),
    ],
    "locale quoting": [
        ('$"abc"', "", "abc"),
        ('$"a b"', "", "a b"),
    ],
    "brace expansion": [
        ("{a,b}", "", None),
        ("x{1,2}y", "", None),
        ("{1..3}", "", None),
        ("{a..c}", "", None),
        ("{01..03}", "", None),
        ("{a,b}{c,d}", "", None),
        ("{1..9..4}", "", None),
    ],
    "parameter expansion": [
        ("${x:1:2}", "x=hello", "el"),
        ("${x:1}", "x=hello", "ello"),
        ("${x: -2}", "x=hello", "lo"),
        ("${x/l/L}", "x=hello", "heLlo"),
        ("${x//l/L}", "x=hello", "heLLo"),
        ("${x/#h/H}", "x=hello", "Hello"),
        ("${x/%o/O}", "x=hello", "hellO"),
        ("${x^}", "x=hello", "Hello"),
        ("${x^^}", "x=hello", "HELLO"),
        ("${x,}", "x=HELLO", "hELLO"),
        ("${x,,}", "x=HELLO", "hello"),
        ("${x~~}", "x=HeLLo", "hEllO"),
        ("${x@Q}", "x=hello", None),
        ("${x@U}", "x=hello", "HELLO"),
        ("${!y}", "x=hello y=x", "hello"),
        ("${x[0]}", "x=hello", "hello"),
        ("${x::-1}", "x=hello", "hell"),
    ],
    "arithmetic expansion": [
        ("$((2**10))", "", "1024"),
        ("$((x++))", "x=5", "5"),
        ("$((16#ff))", "", "255"),
        ("$((2#101))", "", "5"),
        ("$((1,2))", "", "2"),
        ("$[1+2]", "", "3"),
        ("$((-2**2))", "", "4"),
    ],
    "tilde forms": [
        ("~+", "mkdir -p s && cd s", None),
        ("~+/x", "mkdir -p s && cd s", None),
    ],
    "command substitution forms": [
        ("$(<f)", "echo content > f", "content"),
        ('"$(<f)"', "printf 'a b' > f", "a b"),
    ],
}


# Words that bash makes into a command's name (or its words).
COMMAND_NAMES = [
    ("ansi-c quoting", "$'\\x65cho' ran"),
    ("ansi-c quoting", "$'\\145\\143ho' ran"),
    ("ansi-c quoting", "$'\\x74ouch' $'\\x66'; ls"),
    ("locale quoting", '$"echo" ran'),
    ("brace expansion", "{echo,ran}"),
    ("brace expansion", "{touch,f}; ls"),
    ("parameter expansion", "x=ECHO; ${x,,} ran"),
    ("parameter expansion", "x=xecho; ${x:1} ran"),
    ("parameter expansion", "x=ekho; ${x/k/c} ran"),
    ("arithmetic expansion", "x=5; echo $((x++)) > f; cat f"),
]


def words():
    for family, line in COMMAND_NAMES:
        case(family, line + " (a command's name)", line + "\necho status=$?")
    for family, items in WORDS.items():
        for i, (w, setup, pat) in enumerate(items):
            pre = setup + "\n" if setup else ""
            n = "%s #%d" % (w, i)
            case(family, n + " as an argument", pre + "printf '[%s]\\n' " + w)
            if family != "brace expansion":  # bash does not expand braces in an assignment
                case(family, n + " quoted in an assignment", pre + "v=" + w + "; printf '[%s]\\n' \"$v\"")
            case(family, n + " as a redirection's target", pre + "echo written > " + w + "; ls -A")
            if pat is not None:
                q = "'" + pat.replace("'", "'\\''") + "'"
                case(family, n + " as a case pattern",
                     pre + "case " + q + " in " + w + ") echo hit ;; *) echo miss ;; esac")


# ---- echo and printf --------------------------------------------------------------

ESCAPED = ["a\\nb", "x\\c", "\\0101", "tab\\there", "back\\\\slash", "* * * * * root true\\n"]


def echo_printf():
    for i, e in enumerate(ESCAPED):
        q = "'" + e + "'"
        case("echo escapes", "echo %s #%d" % (q, i), "echo " + q + "; echo end")
        case("echo escapes", "echo %s into a file #%d" % (q, i), "echo " + q + " > f; cat f; wc -l < f")
        case("echo escapes", "echo -E %s #%d" % (q, i), "echo -E " + q)
    for opt in ("-e", "-E", "-ne"):
        case("echo options", "echo " + opt, "echo " + opt + " 'a\\tb'; echo")
    case("printf forms", "printf %q", "printf '%q\\n' 'a b'")
    case("printf forms", "printf -v", "printf -v x '%s' hi; echo \"[$x]\"")
    case("printf forms", "printf %(fmt)T", "printf '%(%Y)T\\n' 0")
    case("printf forms", "printf \\u", "printf '\\u00e9\\n'")
    case("printf forms", "printf %b \\x", "printf '%b\\n' '\\x41'")
    case("printf forms", "printf \\x in the format", "printf '\\x41\\n'")


# ---- statements ---------------------------------------------------------------------

def statements():
    s = lambda fam, name, body: case(fam, name, body)
    # [[ ]] and test
    for cond in ("abc == a*", "-v HOME", "a < b", "abc =~ ^a.c$", "-n $x", "( a == a ) && b != c"):
        s("[[ ]]", "[[ %s ]]" % cond, "x=1; [[ " + cond + " ]] && echo yes; echo status=$?")
    s("test", "[ a == a ]", "[ a == a ] && echo yes; echo status=$?")
    s("test", "[ -v HOME ]", "[ -v HOME ] && echo yes; echo status=$?")
    # arithmetic commands
    s("arithmetic commands", "((x=5))", "((x=5)); echo \"[$x]\"")
    s("arithmetic commands", "(( 1 > 2 ))", "(( 1 > 2 )) || echo false; echo status=$?")
    s("arithmetic commands", "let", "let x=3+4; echo \"[$x]\"")
    s("arithmetic commands", "for ((;;))", "for ((i=0; i<3; i++)); do echo $i; done")
    # arrays
    s("arrays", "a=(...)", "a=(1 2 3); echo ${a[1]} ${#a[@]}")
    s("arrays", "a+=(...)", "a=(1); a+=(2); echo ${a[@]}")
    s("arrays", "declare -A", "declare -A m; m[k]=v; echo ${m[k]}")
    s("arrays", "read -a", "echo 'a b' | { read -a r; echo ${r[1]}; }")
    s("arrays", "mapfile", "printf 'a\\nb\\n' | { mapfile -t l; echo ${#l[@]}; }")
    s("arrays", "${x[@]: -1}", "x=(a b); echo ${x[@]: -1}")
    # assignment forms
    s("assignments", "x+=", "x=1; x+=2; echo \"[$x]\"")
    s("assignments", "declare", "declare x=1; echo \"[$x]\"")
    s("assignments", "typeset", "typeset x=1; echo \"[$x]\"")
    s("assignments", "local without a value", "x=1; f() { local x; echo \"[$x]\"; }; f")
    s("assignments", "local -i", "f() { local -i n=2+3; echo \"[$n]\"; }; f")
    # here-strings and redirections
    s("here-strings", "cat <<<", "cat <<< hi")
    s("here-strings", "read <<<", "read x <<< 'a b'; echo \"[$x]\"")
    s("redirections", "&>", "echo hi &> f; wait; echo; cat f")
    s("redirections", "&>>", "echo hi &>> f; wait; echo; cat f")
    s("redirections", ">& file", "echo hi >& f; cat f")
    s("redirections", "|&", "{ echo e >&2; } |& cat")
    s("redirections", "{fd}>", "exec {fd}> f; echo hi >&$fd; cat f")
    s("redirections", "<<< into a file", "cat <<< written > f; cat f")
    # process substitution
    s("process substitution", "<(...)", "cat <(echo hi)")
    s("process substitution", ">(...)", "echo hi > >(cat > f); wait $!; cat f")
    s("process substitution", "diff <(...) <(...)", "diff <(echo a) <(echo a) && echo same")
    # functions
    s("functions", "function f { }", "function f { echo in; }; f")
    s("functions", "function f() { }", "function f() { echo in; }; f")
    s("functions", "$FUNCNAME", "f() { echo \"[$FUNCNAME]\"; }; f")
    s("functions", "return from a sourced file", "echo 'return 3' > r; source ./r; echo status=$?")
    # source and .
    s("source", "source ./file", "echo 'echo sourced' > f; source ./f")
    s("source", ". file (not on PATH)", "echo 'echo dot' > f; . f")
    # special variables and parameters
    # (not SHLVL: bash exports it, so a /bin/sh that bash started sees it too)
    for v in ("RANDOM", "SECONDS", "BASHPID", "EPOCHSECONDS", "UID", "EUID", "BASH_VERSION",
              "HOSTTYPE", "OSTYPE", "BASH"):
        s("special variables", "$" + v, "[ -n \"$" + v + "\" ] && echo set || echo unset")
    s("special variables", "${PIPESTATUS[0]}", "false | true; echo ${PIPESTATUS[0]}")
    s("special variables", "${BASH_REMATCH[1]}", "[[ abc =~ a(b)c ]]; echo ${BASH_REMATCH[1]}")
    s("special variables", "${#BASH_VERSINFO[@]}", "echo ${#BASH_VERSINFO[@]}")
    s("special variables", "${!HO*}", "echo ${!HOM*}")
    s("special parameters", "$-", "echo \"[$-]\"")
    s("special parameters", "$0", "case $0 in *bash) echo bash ;; *) echo other ;; esac")
    # globbing options
    s("globbing", "nullglob", "shopt -s nullglob; echo [ /nonexistent* ]")
    s("globbing", "failglob", "shopt -s failglob; echo /nonexistent*; echo after")
    s("globbing", "dotglob", "touch .h v; shopt -s dotglob; echo *")
    s("globbing", "nocaseglob", "touch A; shopt -s nocaseglob; echo a*")
    s("globbing", "globstar", "mkdir -p x/y; touch x/y/z; shopt -s globstar; echo **/z")
    s("globbing", "extglob", "touch a b c; shopt -s extglob\necho !(a)")
    s("globbing", "GLOBIGNORE", "touch a b c; GLOBIGNORE=a; echo *")
    s("globbing", "[^...]", "touch a b; echo [^a]")
    s("globbing", "brace expansion into files", "mkdir -p d/{a,b}; touch d/{c,e}; ls -R d")
    # aliases (dash expands them in a script, bash without expand_aliases does not)
    s("aliases", "alias then use", "alias hi='echo aliased'\nhi; echo status=$?")
    s("aliases", "alias overriding a builtin", "alias cd='echo no-cd'\ncd /; pwd")
    # traps and options
    s("traps", "trap ERR", "trap 'echo err' ERR; false; echo after")
    s("options", "set -o pipefail", "set -o pipefail; false | true; echo status=$?")
    s("options", "set -o posix", "set -o posix; echo status=$?")
    s("options", "shopt", "shopt -q extglob; echo status=$?")
    # builtins dash lacks or spells otherwise
    s("builtins", "type -t", "type -t cd")
    s("builtins", "caller", "caller; echo status=$?")
    s("builtins", "exec -a", "exec -a zz bash -c 'echo $0'")
    s("builtins", "read -n", "echo abc | { read -n 1 c; echo \"[$c]\"; }")
    s("builtins", "coproc", "coproc cat; echo hi >&${COPROC[1]}; read -u ${COPROC[0]} l; echo $l")
    s("builtins", "select", "select x in a; do break; done <<< 1; echo \"[$x]\"")
    s("builtins", "wait -n", "wait -n; echo status=$?")
    s("builtins", "help", "help true >/dev/null; echo status=$?")
    # case fall-through
    s("case", ";&", "case a in a) echo 1 ;& b) echo 2 ;; esac")
    s("case", ";;&", "case a in a) echo 1 ;;& a) echo 2 ;; esac")


words()
echo_printf()
statements()
out = sys.stdout.buffer
for family, name, command in cases:
    for field in (family, name, command):
        out.write(field.encode() + b"\0")

# tests/ops/events.sh -- sourced by tests/ops/run.sh: every log event the C
# code can write is listed in docs/operators.md "Log events", and every event
# listed there is one the code writes (mcp.* and hook.* are listed as
# families; probe.* and guard.* names built at run time are listed by hand).
code_events=$(grep -rhoE 'evt=[a-z_]+(\.[a-z_]+)?' --include=*.c worker transport zerto store cli lib |
	sed 's/^evt=//' | grep '\.[a-z]' | sort -u)
guard_steps=$(grep -ohE 'emit\(&?g, "[a-z_.]+"' zerto/guard.c | grep -oE '"[a-z_.]+"' | tr -d '"')
# a recovery's steps are logged under their own names (worker/recreq.c rec_step)
rec_steps=$(grep -ohE 'rec_step\(r, "[a-z_.]+"' worker/*.c | grep -oE '"[a-z_.]+"' | tr -d '"' | sort -u)
built=$(grep -oE '"exec\.%s|log_db_error\(it, "[a-z_]+"' worker/pipeline.c worker/guardonly.c |
	grep -oE '"[a-z_]+"' | tr -d '"' | sed 's/^/exec./')
doc=$(sed -n '/^## Log events/,$p' docs/operators.md)
missing=""
for e in $code_events $guard_steps $rec_steps $built guard.ok guard.end; do
	grep -qF "\`$e\`" <<<"$doc" || missing="$missing $e"
done
check_eq "every event the code logs is in docs/operators.md's list" "" "$missing"
stale=""
for e in $(grep -oE '`[a-z_]+\.[a-z_]+`' <<<"$doc" | tr -d '`' | sort -u); do
	case $e in mcp.* | hook.* | probe.access_outside_airlock | probe.change_outside_airlock) continue ;; esac
	grep -rqE "evt=$e\\b|\"$e\"|log_db_error\\(it, \"${e#exec.}\"" --include=*.c worker transport zerto store cli lib ||
		stale="$stale $e"
done
check_eq "every event in the list is one the code logs" "" "$stale"

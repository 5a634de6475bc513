# tests/daemon/probeturns.sh -- sourced by tests/daemon/run.sh (suite 50)
# with daemon d1 running, probing every second: a guest agent serves one
# client at a time, and the batched agent probe takes its turn.  A long
# command airlock runs in vm:web01 (VM 101), and then someone else's long
# `qm guest exec` there, while probe rounds go on: both finish with their
# output, and the probes never record web01's agent as anything but running.
# The overlap itself is checked: rounds ran during each command, leaving
# web01 out of the batch while airlock's command ran (busy=1), and asking it
# in the batch, which it answered, during the other one.

# sample_agent FILE: web01's recorded agent state every 0.2 s, until killed.
sample_agent() {
	while :; do
		q "SELECT attributes->>'qemu_guest_agent' FROM airlock.entities WHERE slug = 'vm:web01'" >>"$1"
		sleep 0.2
	done
}
# rounds_since LINE FILTER: probe.round lines of d1's log after line LINE
# that match the extended regular expression FILTER.
rounds_since() { tail -n +"$(($1 + 1))" "$WORK/d1.log" | grep 'evt=probe.round ' | grep -cE -- "$2" || true; }

check "web01's agent is probed running before the overlap" \
	wait_for 30 "SELECT attributes->>'qemu_guest_agent' = 'running' FROM airlock.entities WHERE slug = 'vm:web01'"

# ---- airlock's own long command: the batch leaves its VM out
mark=$(wc -l <"$WORK/d1.log")
: >"$WORK/agent.samples"
sample_agent "$WORK/agent.samples" &
sampler=$!
id=$(as_agent $A run --target vm:web01 -- 'sleep 8; echo long-vm-marker')
check "an 8-second command on vm:web01 runs" wait_for 30 "SELECT state IN ('running', 'succeeded') FROM airlock.executions WHERE id = $id"
check "and succeeds while the probes go on" wait_for 60 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
kill "$sampler"
wait "$sampler" 2>/dev/null
check_out "with its own output" 'long-vm-marker' as_agent $A show $id
busy_rounds=$(rounds_since "$mark" ' busy=1 ')
check "overlap: at least two probe rounds ran while it did, leaving its VM out (busy=1: $busy_rounds)" \
	test "$busy_rounds" -ge 2
check_eq "the probes never recorded web01's agent as other than running meanwhile" running \
	"$(sort -u "$WORK/agent.samples" | paste -sd' ')"

# ---- someone else's long qm guest exec on the same VM: the batch takes turns with it
mark=$(wc -l <"$WORK/d1.log")
: >"$WORK/agent.samples"
sample_agent "$WORK/agent.samples" &
sampler=$!
ssh -F "$AIRLOCK_RIG_SSH_CONFIG" pverig qm guest exec 101 --timeout 30 -- \
	/bin/sh -c "'sleep 8; echo foreign-marker'" >"$WORK/foreign.out" 2>"$WORK/foreign.err"
rc=$?
kill "$sampler"
wait "$sampler" 2>/dev/null
check_eq "a foreign 8-second qm guest exec on VM 101 exits 0 during the probe rounds" "0" "$rc"
check_out "and returns the guest's output, not an agent error" '"out-data" : "foreign-marker\\n"' \
	cat "$WORK/foreign.out" "$WORK/foreign.err"
asked_rounds=$(rounds_since "$mark" ' busy=0 .* answered=1 ')
check "overlap: at least two rounds asked web01's agent in the batch meanwhile, and it answered ($asked_rounds)" \
	test "$asked_rounds" -ge 2
check_eq "web01's agent stayed recorded running" running "$(sort -u "$WORK/agent.samples" | paste -sd' ')"

# tests/ops/user.sh -- airlock user add: a login in exactly one airlock role,
# a SCRAM verifier made on the client side (the password works, over TCP
# with scram-sha-256), certificate logins, the pg_hba line and conninfo
# printed, and refusals that write nothing.  Sourced by tests/ops/run.sh.

has_role() { q "SELECT pg_has_role('$1', '$2', 'MEMBER')"; }
exists() { q "SELECT count(*) FROM pg_roles WHERE rolname = '$1'"; }

pw=$WORK/olivia.pw
printf 'correct horse battery staple\n' >"$pw"
chmod 600 "$pw"
check_rc "user add olivia --operator (password from a file)" 0 \
	$A user add olivia --operator --password-file "$pw" --from 10.1.2.0/24
out=$($A user add olivia --operator --password-file "$pw" --from 10.1.2.0/24 2>&1)
check_out "running it again updates the login" '^updated login olivia in airlock_operator' echo "$out"
check_out "it prints the pg_hba.conf line" "hostssl +$PGDATABASE +olivia +10\.1\.2\.0/24 +scram-sha-256" echo "$out"
check_out "and the client's conninfo" "port=$PGPORT dbname=$PGDATABASE user=olivia sslmode=verify-full" echo "$out"
check "the password itself is never printed" sh -c "! grep -qF 'battery staple' <<'EOT'
$out
EOT"
check_eq "olivia is an operator" t "$(has_role olivia airlock_operator)"
check_eq "and not an agent" f "$(has_role olivia airlock_agent)"
check_out "the password is stored as a SCRAM-SHA-256 verifier" '^SCRAM-SHA-256\$4096:' \
	q "SELECT rolpassword FROM pg_authid WHERE rolname = 'olivia'"

# The password works where pg_hba asks for SCRAM over TCP, and only it.
datadir=$(q "SHOW data_directory")
hba=$datadir/pg_hba.conf
cp "$hba" "$WORK/pg_hba.saved"
{ echo "host $PGDATABASE olivia 127.0.0.1/32 scram-sha-256"; cat "$WORK/pg_hba.saved"; } >"$hba"
q "SELECT pg_reload_conf()" >/dev/null
sleep 1
check_eq "fault check: TCP logins for olivia now need SCRAM" 2 \
	"$(PGPASSWORD=wrong-password-here psql -XAtq -h 127.0.0.1 -U olivia -c 'SELECT 1' 2>/dev/null; echo $?)"
check_eq "olivia logs in with her password over TCP" olivia \
	"$(PGPASSWORD='correct horse battery staple' psql -XAtq -h 127.0.0.1 -U olivia -c 'SELECT session_user')"
printf 'another long passphrase\n' >"$pw"
check_rc "a new password (same role) is accepted" 0 $A user add olivia --operator --password-file "$pw"
check_eq "the old password no longer works" 2 \
	"$(PGPASSWORD='correct horse battery staple' psql -XAtq -h 127.0.0.1 -U olivia -c 'SELECT 1' >/dev/null 2>&1; echo $?)"
check_eq "the new one does" olivia \
	"$(PGPASSWORD='another long passphrase' psql -XAtq -h 127.0.0.1 -U olivia -c 'SELECT session_user')"
cp "$WORK/pg_hba.saved" "$hba"
q "SELECT pg_reload_conf()" >/dev/null

# One login, one role.
check_rc "olivia cannot also become an agent (exit 3)" 3 \
	$A user add olivia --agent --password-file "$pw"
check_out "  the refusal says why" 'already holds airlock_operator: one login, one airlock role' \
	$A user add olivia --agent --password-file "$pw"
check_eq "  and nothing was granted" f "$(has_role olivia airlock_agent)"
check_rc "hermes (an agent) cannot become an operator" 3 \
	$A user add hermes --operator --password-file "$pw"
check_eq "  hermes is still no operator" f "$(has_role hermes airlock_operator)"
q "CREATE ROLE sup LOGIN SUPERUSER" >/dev/null
check_rc "a superuser cannot be made an operator" 3 $A user add sup --operator --password-file "$pw"

# Certificate authentication: no password at all.
out=$($A user add hermes2 --agent --cert --from 192.168.7.0/24 2>&1)
check_out "user add --cert creates the agent" '^created login hermes2 in airlock_agent \(certificate' echo "$out"
check_out "  its pg_hba line uses cert" "hostssl +$PGDATABASE +hermes2 +192\.168\.7\.0/24 +cert" echo "$out"
check_out "  its conninfo names the client certificate" 'sslcert=hermes2.crt sslkey=hermes2.key' echo "$out"
check_eq "  it has no password" t "$(q "SELECT rolpassword IS NULL FROM pg_authid WHERE rolname = 'hermes2'")"
check_eq "  and is an agent" t "$(has_role hermes2 airlock_agent)"
check_rc "the daemon's login: --worker" 0 $A user add airlockd2 --worker --cert
check_eq "  in airlock_worker" t "$(has_role airlockd2 airlock_worker)"

# The password asked on a terminal, twice, without echo.
out=$(tests/ops/tty_answer.py 'typed at the prompt' 'typed at the prompt' -- $A user add tina --operator 2>&1)
check_out "the password is asked on the terminal" 'password for tina:' echo "$out"
check "  and not echoed" sh -c "! grep -qF 'typed at the prompt' <<'EOT'
$out
EOT"
check_eq "  the login exists" 1 "$(exists tina)"
out=$(tests/ops/tty_answer.py 'first one typed' 'second one typed' -- $A user add tom --operator 2>&1)
check_out "two different answers are refused" 'passwords differ' echo "$out"
check_eq "  and tom was not created" 0 "$(exists tom)"

# Bad input: a clear error, nothing created.
printf 'short\n' >"$WORK/short.pw"
check_rc "a short password: usage error" 2 $A user add shorty --operator --password-file "$WORK/short.pw"
check_eq "  shorty was not created" 0 "$(exists shorty)"
check_rc "no terminal and no password file: invalid argument" 2 setsid -w $A user add nobody1 --operator
check_eq "  nobody1 was not created" 0 "$(exists nobody1)"
check_rc "a missing password file: invalid argument" 2 $A user add nobody2 --operator --password-file /nonexistent
check_rc "a name with capitals" 2 $A user add Bad-Name --operator --cert
check_rc "a group role's name is refused" 3 $A user add airlock_agent --operator --cert
check_eq "  airlock_agent still cannot log in" f "$(q "SELECT rolcanlogin FROM pg_roles WHERE rolname = 'airlock_agent'")"
check_rc "a pg_ name" 2 $A user add pg_evil --operator --cert
check_rc "no role" 2 $A user add nobody3 --cert
check_rc "two roles" 2 $A user add nobody4 --agent --operator --cert
check_rc "--cert with a password file" 2 $A user add nobody5 --agent --cert --password-file "$pw"
check_rc "a --from that would smuggle a method" 2 $A user add nobody6 --agent --cert --from '0.0.0.0/0 trust'
check_eq "none of them exists" 0 "$(q "SELECT count(*) FROM pg_roles WHERE rolname ~ '^nobody'")"
check_rc "user without add: usage" 2 $A user

# tests/web/lib.sh -- set-up for the console's tests: logins with passwords
# checked by SCRAM over TCP, airlock-web instances on free loopback ports,
# and curl helpers that keep one cookie jar per operator.  Source after
# tests/lib.sh and tests/daemon/lib.sh (inside scripts/pgtmp and the rig).
W=build/bin/airlock-web

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Operators and the others sign in with passwords; TCP from loopback needs
# SCRAM, so the password is really checked.  airlock-web's own login "web"
# connects over the unix socket.
web_setup_db() {
	q "CREATE ROLE web LOGIN IN ROLE airlock_web;
	   ALTER ROLE alice PASSWORD 'alice-secret-pw';
	   ALTER ROLE bob PASSWORD 'bob-secret-pw';
	   ALTER ROLE hermes PASSWORD 'hermes-secret-pw';
	   CREATE ROLE dave LOGIN PASSWORD 'dave-secret-pw' IN ROLE airlock_operator;
	   CREATE ROLE rooty LOGIN SUPERUSER PASSWORD 'rooty-secret-pw' IN ROLE airlock_operator;
	   CREATE ROLE plain LOGIN PASSWORD 'plain-secret-pw';
	   CREATE ROLE trusty LOGIN PASSWORD 'trusty-secret-pw' IN ROLE airlock_operator;" >/dev/null || return 1
	HBA=$(q "SHOW data_directory")/pg_hba.conf
	cp "$HBA" "$WORK/pg_hba.orig"
	{ echo "host all trusty 127.0.0.1/32 trust"; echo "host all all 127.0.0.1/32 scram-sha-256"
	  cat "$WORK/pg_hba.orig"; } >"$HBA"
	q "SELECT pg_reload_conf()" >/dev/null
}

# start_web NAME [EXTRA YAML LINES]: airlock-web with $WORK/NAME.yaml on a
# free port; its URL in $URL, pid in $WPID.  Returns once it listens.  In
# the extra lines @PORT@ is the port it listens on (for public_url).
start_web() {
	local name=$1 port i=0
	shift
	port=$(free_port)
	cat >"$WORK/$name.yaml" <<EOC
listen: 127.0.0.1:$port
database: "host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=web"
operator_database: "host=127.0.0.1 port=$PGPORT dbname=$PGDATABASE"
log_level: debug
$(printf '%s\n' "$@" | sed "s/@PORT@/$port/g")
EOC
	${WEB_WRAP:-} $W -c "$WORK/$name.yaml" >>"$WORK/$name.log" 2>&1 &
	WPID=$!
	DAEMON_PIDS+=("$WPID")
	URL=http://127.0.0.1:$port
	if grep -q '^tls_cert:' "$WORK/$name.yaml"; then URL=https://127.0.0.1:$port; fi
	until grep -q 'evt=web.started' "$WORK/$name.log" 2>/dev/null; do
		kill -0 "$WPID" 2>/dev/null || { cat "$WORK/$name.log" >&2; return 1; }
		[ $i -lt 1200 ] || return 1
		sleep 0.1
		i=$((i + 1))
	done
}

# signin JAR LOGIN PASSWORD [CODE] [URL]: prints the HTTP status.
signin() {
	curl -sk -c "$WORK/$1.jar" -b "$WORK/$1.jar" -o "$WORK/$1.signin.html" -w '%{http_code}' \
		--data-urlencode "login=$2" --data-urlencode "password=$3" --data-urlencode "code=${4:-}" \
		"${5:-$URL}/login"
}

# get JAR PATH: the page's body into $WORK/JAR.html; prints the status.
get() { curl -sk -b "$WORK/$1.jar" -o "$WORK/$1.html" -w '%{http_code}' "$URL$2"; }

# csrf_of JAR: the CSRF token in the last page JAR fetched.
csrf_of() { grep -o 'name="csrf" value="[0-9a-f]*"' "$WORK/$1.html" | head -1 | sed 's/.*value="//; s/"$//'; }
hash_of() { grep -o 'name="hash" value="[0-9a-f]*"' "$WORK/$1.html" | head -1 | sed 's/.*value="//; s/"$//'; }

# post JAR PATH FIELD=VALUE...: body into $WORK/JAR.post.html; prints the status.
post() {
	local jar=$1 path=$2 args=()
	shift 2
	for kv in "$@"; do args+=(--data-urlencode "$kv"); done
	curl -sk -b "$WORK/$jar.jar" -c "$WORK/$jar.jar" -o "$WORK/$jar.post.html" -w '%{http_code}' \
		"${args[@]}" "$URL$path"
}

# totp SECRET_BASE32 [OFFSET_STEPS]: the current code, computed independently.
totp() {
	python3 - "$1" "${2:-0}" <<'EOF'
import base64, hashlib, hmac, struct, sys, time
key = base64.b32decode(sys.argv[1] + "=" * (-len(sys.argv[1]) % 8))
step = int(time.time()) // 30 + int(sys.argv[2])
mac = hmac.new(key, struct.pack(">Q", step), hashlib.sha1).digest()
off = mac[-1] & 15
print("%06d" % ((struct.unpack(">I", mac[off:off + 4])[0] & 0x7fffffff) % 1000000))
EOF
}

# wait_file SECONDS FILE TEXT: until FILE contains TEXT.
wait_file() {
	local limit=$(($1 * 10)) i=0
	while [ $i -lt $limit ]; do
		grep -qF -- "$3" "$2" 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# tests/ops/npm.sh -- scripts/npm-deps, which installs the test clients'
# npm dependencies: an install happens again whenever package.json or the
# lockfile changed (never skipped because node_modules exists), and a Node
# older than a client's "engines" is refused with what to do.  On a client
# of its own with no dependencies (npm ci needs no registry for it).
# Sourced by tests/ops/run.sh.

npmd=$WORK/npm-client
mkdir -p "$npmd"
printf '{"name": "npm-deps-test", "private": true, "engines": {"node": ">=18"}}\n' >"$npmd/package.json"
printf '{"name": "npm-deps-test", "lockfileVersion": 3, "requires": true, "packages": {"": {"name": "npm-deps-test", "engines": {"node": ">=18"}}}}\n' \
	>"$npmd/package-lock.json"
check_out "npm-deps install: the first time, npm ci" 'npm-deps: .*npm-client: npm ci' \
	scripts/npm-deps install "$npmd"
check "  and the install is stamped beside node_modules" test -s "$npmd/node_modules/.airlock-installed"
check_eq "the same lockfile again: nothing to do" "" "$(scripts/npm-deps install "$npmd" 2>&1)"
# What `git pull` does to a lockfile: the stamp no longer matches.
sed -i 's/"requires": true/"requires": false/' "$npmd/package-lock.json"
check_out "a changed lockfile is installed again, though node_modules exists" \
	'package-lock.json, package.json or Node changed since node_modules was installed: npm ci' \
	scripts/npm-deps install "$npmd"
check_eq "  and then it is current" "" "$(scripts/npm-deps install "$npmd" 2>&1)"
have_node=$(node -p 'process.versions.node')
printf '{"name": "npm-deps-test", "private": true, "engines": {"node": ">=%s"}}\n' \
	"$(( ${have_node%%.*} + 1 )).0.0" >"$npmd/package.json"
check_rc "a client that needs a newer Node than this one is refused" 1 scripts/npm-deps check "$npmd"
check_out "  saying which Node it needs, which it found, and what to do" \
	"needs Node.js >=$(( ${have_node%%.*} + 1 )).0.0 \(its package.json\), and .* is $have_node: install Node.js" \
	scripts/npm-deps check "$npmd"
check_rc "  and install refuses it before npm runs" 1 scripts/npm-deps install "$npmd"
check "the repository's clients run on this Node" scripts/npm-deps check tests/web tests/mcp

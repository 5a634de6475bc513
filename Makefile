# airlock -- one non-recursive Makefile.
#
#   make          all binaries (build/bin/airlock, airlockd, airlock-mcp, airlock-web)
#   make test     install deps, build, run everything CI runs (tests/run)
#   make demo     install deps, build, run the incident replay (scripts/demo)
#   make console  the demo estate with the operators' console (airlock-web), for
#                 a person to click through (scripts/console); Ctrl-C stops it
#   make bench    benchmarks (tests/bench/run)
#   make chaos    the fault suite, long: more rows and crash rounds (minutes)
#   make install  binaries, man pages, migrations, seeds, config, systemd unit
#                 (PREFIX=/usr/local, DESTDIR for staging; see "Installation")
#   make package  the Debian package (dpkg-buildpackage -us -uc -b), into build/
#   make package-test  build, install and run it in a fresh Debian 12 root
#                 (scripts/bookworm-root makes it under build/ with debootstrap)
#   make fresh-root-test  the README's `make demo` and `make test` in a fresh
#                 Debian 12 root, timed and measured (scripts/fresh-root-test)
#   make clean
#
# Every module directory's .c files except main.c go into one static archive;
# each binary is its directory's main.c linked against it.  A new module file
# needs no Makefile change.

PKGS      := libpq libcurl libcjson openssl libssh2 yaml-0.1
CC        ?= cc
CLANG     ?= clang
OPT       ?= -O2
WARN      := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
             -Wno-missing-field-initializers
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CFLAGS    := -std=c11 -D_GNU_SOURCE -g $(OPT) $(WARN) -I. $(PKG_CFLAGS) $(EXTRA_CFLAGS)
LDLIBS    := $(PKG_LIBS) -lpthread -lm
SAN       := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
ASAN_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 $(WARN) -I. $(PKG_CFLAGS) $(SAN)

B         := build

# Installation.  SHAREDIR and SYSCONFDIR are compiled into the binaries
# (build/gen/buildinfo.h), so an installed airlock finds its migrations and
# seeds without --dir; a binary run from build/bin/ in a checkout uses the
# checkout instead (lib/paths.h).
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
DATADIR    ?= $(PREFIX)/share
SHAREDIR   ?= $(DATADIR)/airlock
MANDIR     ?= $(DATADIR)/man
SYSCONFDIR ?= /etc
UNITDIR    ?= $(if $(filter /usr,$(PREFIX)),/lib/systemd/system,$(PREFIX)/lib/systemd/system)
GEN        := $(B)/gen/buildinfo.h
MODDIRS   := lib classifier store transport zerto worker mcp hook cli
SRC       := $(wildcard $(addsuffix /*.c,$(MODDIRS)))
LIBSRC    := $(filter-out %/main.c,$(SRC))
LIBOBJ    := $(LIBSRC:%.c=$(B)/obj/%.o)
ASANOBJ   := $(LIBSRC:%.c=$(B)/asan/%.o)

BIN_airlock      := cli/main.c
BIN_airlockd     := worker/main.c
BIN_airlock-mcp  := mcp/main.c
BINS      := $(foreach b,airlock airlockd airlock-mcp,$(if $(wildcard $(BIN_$(b))),$(B)/bin/$(b)))

# The operator's console (web/): its modules go into their own archive, so
# that only airlock-web links libmicrohttpd; the unit tests link its ASan twin.
WEB_PKGS  := libmicrohttpd
WEB_CFLAGS := $(shell pkg-config --cflags $(WEB_PKGS) 2>/dev/null)
WEB_LIBS  := $(shell pkg-config --libs $(WEB_PKGS) 2>/dev/null)
WEBSRC    := $(filter-out web/main.c,$(wildcard web/*.c))
WEBOBJ    := $(WEBSRC:%.c=$(B)/obj/%.o)
WEBASAN   := $(WEBSRC:%.c=$(B)/asan/%.o)
BINS      += $(B)/bin/airlock-web

# The jail's helper (jail/airlock-jail.c): one C file, static, copied by
# airlockd to every target.  musl-gcc (Debian's musl-tools) for a small
# binary; the system compiler's -static otherwise.
JAIL_CC   := $(shell command -v musl-gcc 2>/dev/null || echo $(CC))
JAIL_CFLAGS := -std=c11 -Os -static $(WARN) -fno-stack-protector -I.
BINS      += $(B)/bin/airlock-jail

$(B)/bin/airlock-jail: jail/airlock-jail.c transport/shell.h
	@mkdir -p $(dir $@)
	$(JAIL_CC) $(JAIL_CFLAGS) -o $@ $< -s

UNITSRC   := $(wildcard tests/unit/*_test.c)
UNITBINS  := $(UNITSRC:tests/unit/%.c=$(B)/unit/%)

FUZZSRC   := $(wildcard tests/fuzz/*_fuzz.c)
FUZZBINS  := $(FUZZSRC:tests/fuzz/%.c=$(B)/fuzz/%)

.PHONY: all test demo console bench chaos clean unit fuzz format check-format deps install package \
        package-test fresh-root-test FORCE
.DEFAULT_GOAL := all

all: $(BINS)

deps:
	scripts/install-deps

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(EXTRA_WEB) -MMD -MP -c $< -o $@

$(B)/asan/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) $(EXTRA_WEB) -MMD -MP -c $< -o $@

# Rewritten only when its content changes: the paths above or the set of
# migrations/*.sql.  The modules that include it are listed here; -MMD tracks
# them after the first build.
$(GEN): FORCE
	@mkdir -p $(dir $@)
	@scripts/buildinfo '$(SHAREDIR)' '$(SYSCONFDIR)' migrations >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
FORCE:

GEN_USERS := lib/paths store/schema
$(foreach m,$(GEN_USERS),$(eval $(B)/obj/$(m).o $(B)/asan/$(m).o: $(GEN)))

$(B)/libairlock.a: $(LIBOBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(B)/libairlock-asan.a: $(ASANOBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(WEBOBJ) $(WEBASAN): EXTRA_WEB := $(WEB_CFLAGS)
$(B)/libairlock-web.a: $(WEBOBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(B)/libairlock-web-asan.a: $(WEBASAN)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(B)/bin/airlock-web: web/main.c $(B)/libairlock-web.a $(B)/libairlock.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WEB_CFLAGS) -o $@ web/main.c $(B)/libairlock-web.a $(B)/libairlock.a \
		$(WEB_LIBS) $(LDLIBS)

$(B)/bin/%: $(B)/libairlock.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(BIN_$*) $(B)/libairlock.a $(LDLIBS)

# The binaries also depend on their main.c.
$(foreach b,airlock airlockd airlock-mcp,$(eval $(B)/bin/$(b): $(BIN_$(b))))

$(B)/unit/%: tests/unit/%.c $(B)/libairlock-web-asan.a $(B)/libairlock-asan.a
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) -o $@ $< $(B)/libairlock-web-asan.a $(B)/libairlock-asan.a $(LDLIBS) \
		-lcmocka

unit: $(UNITBINS)

# Integration programs (tests/integration/<name>.c), built on demand by the
# suite or benchmark that runs them: with ASan+UBSan for tests
# (build/integration/<name>), optimized for benchmarks (build/bench/<name>).
INTEGHDR  := $(wildcard tests/integration/*.h)
$(B)/integration/%: tests/integration/%.c $(INTEGHDR) $(B)/libairlock-asan.a
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) -o $@ $< $(B)/libairlock-asan.a $(LDLIBS) -lcmocka

$(B)/bench/%: tests/integration/%.c $(INTEGHDR) $(B)/libairlock.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(B)/libairlock.a $(LDLIBS) -lcmocka

# libFuzzer targets: clang compiles the fuzzed modules itself with the fuzzer
# instrumentation: lib, classifier and the transport's qm JSON decoder.
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -I. $(PKG_CFLAGS) \
               -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer
FUZZ_DEFAULT_SRC := $(wildcard lib/*.c classifier/*.c) transport/qmjson.c
# The jail helper's argument parser is fuzzed in its own file (it includes
# jail/airlock-jail.c without main).
$(B)/fuzz/jailargs_fuzz: tests/fuzz/jailargs_fuzz.c jail/airlock-jail.c
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -o $@ $<

$(B)/fuzz/%: tests/fuzz/%.c $(FUZZ_DEFAULT_SRC) $(GEN)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_DEFAULT_SRC) $(LDLIBS)

fuzz: $(FUZZBINS)

# Benchmark drivers (tests/bench/*_bench.c), built on demand by their scripts.
$(B)/bench/%_bench: tests/bench/%_bench.c $(B)/libairlock.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(B)/libairlock.a $(LDLIBS)

FORMAT_FILES = $(wildcard $(addsuffix /*.[ch],$(MODDIRS) web jail) tests/unit/*.c tests/fuzz/*.c tests/bench/*.c \
                 tests/integration/zerto*.[ch])

format:
	clang-format -i $(FORMAT_FILES)

check-format:
	@clang-format --dry-run -Werror $(FORMAT_FILES) && echo "format: ok"

test: deps
	$(MAKE) all unit fuzz
	tests/run

demo: deps
	$(MAKE) all
	scripts/demo

console: deps
	$(MAKE) all
	scripts/console

bench: deps
	$(MAKE) all
	tests/bench/run

chaos: deps
	$(MAKE) all
	FAULTS_N=$${FAULTS_N:-400} FAULTS_ROUNDS=$${FAULTS_ROUNDS:-8} \
		scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/faults/run.sh

# Installation: DESTDIR stages (debian/rules uses it).  An existing
# $(SYSCONFDIR)/airlock/airlockd.yaml is never overwritten.  A real install
# (no DESTDIR) as root also does what the package's postinst does: the
# system user airlock (useradd --system, when it does not exist yet), and
# $(SYSCONFDIR)/airlock root:airlock 0750 with airlockd.yaml root:airlock
# 0640.  Staged, or not as root, it says what it left undone.
MAN1 := man/airlock.1 man/airlock-mcp.1 man/airlock-web.1
MAN8 := man/airlockd.8
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(SHAREDIR)/migrations $(DESTDIR)$(SHAREDIR)/seeds \
		$(DESTDIR)$(SYSCONFDIR)/airlock $(DESTDIR)$(UNITDIR)
	install -m 0755 $(B)/bin/airlock $(B)/bin/airlock-mcp $(B)/bin/airlock-web $(DESTDIR)$(BINDIR)/
	install -m 0755 $(B)/bin/airlockd $(DESTDIR)$(SBINDIR)/
	install -m 0755 $(B)/bin/airlock-jail $(DESTDIR)$(SHAREDIR)/airlock-jail
	install -m 0644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(MAN8) $(DESTDIR)$(MANDIR)/man8/
	install -m 0644 migrations/[0-9][0-9][0-9][0-9]_*.sql $(DESTDIR)$(SHAREDIR)/migrations/
	install -m 0644 seeds/*.yaml $(DESTDIR)$(SHAREDIR)/seeds/
	install -m 0644 docs/airlockd.example.yaml $(DESTDIR)$(SHAREDIR)/airlockd.example.yaml
	install -m 0644 dist/airlockd.yaml $(DESTDIR)$(SHAREDIR)/airlockd.yaml
	[ -e $(DESTDIR)$(SYSCONFDIR)/airlock/airlockd.yaml ] || \
		install -m 0644 dist/airlockd.yaml $(DESTDIR)$(SYSCONFDIR)/airlock/airlockd.yaml
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		dist/airlockd.service >$(DESTDIR)$(UNITDIR)/airlockd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/airlockd.service
	install -m 0644 dist/airlock-web.yaml $(DESTDIR)$(SHAREDIR)/airlock-web.yaml
	[ -e $(DESTDIR)$(SYSCONFDIR)/airlock/airlock-web.yaml ] || \
		install -m 0644 dist/airlock-web.yaml $(DESTDIR)$(SYSCONFDIR)/airlock/airlock-web.yaml
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		dist/airlock-web.service >$(DESTDIR)$(UNITDIR)/airlock-web.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/airlock-web.service
	@if [ -n "$(DESTDIR)" ] || [ "$$(id -u)" != 0 ]; then \
		echo "make install: $(if $(DESTDIR),staged in DESTDIR,not root): the system user airlock" \
			"and $(SYSCONFDIR)/airlock root:airlock 0750 are left undone (the package's postinst," \
			"or make install as root, does them)"; \
	else \
		getent passwd airlock >/dev/null || \
			useradd --system --user-group --home-dir /nonexistent --no-create-home \
				--shell /usr/sbin/nologin airlock || exit 1; \
		chown root:airlock $(SYSCONFDIR)/airlock $(SYSCONFDIR)/airlock/airlockd.yaml && \
			chmod 0750 $(SYSCONFDIR)/airlock && chmod 0640 $(SYSCONFDIR)/airlock/airlockd.yaml || exit 1; \
		echo "make install: the system user airlock; $(SYSCONFDIR)/airlock root:airlock 0750"; \
	fi

# The Debian package, built the Debian way (dpkg-buildpackage -us -uc -b) in
# a copy of the tree under $(B)/pkg/, so that its by-products land in
# $(B)/pkg/ and not beside the checkout: $(B)/pkg/airlock_*.deb.
package:
	rm -rf $(B)/pkg && mkdir -p $(B)/pkg/airlock
	tar --exclude=./build --exclude=./.git --exclude=node_modules -cf - . | \
		tar -C $(B)/pkg/airlock -xf -
	cd $(B)/pkg/airlock && dpkg-buildpackage -us -uc -b
	@ls $(B)/pkg/airlock_*.deb

# The package from nothing, in a copy of a fresh Debian 12 root (root, the
# network for apt, minutes): tests/ops/package-test.sh.  The root is built
# once under $(B)/bookworm-root (scripts/bookworm-root) and reused.
package-test: deps
	tests/rig/rigctl run -- tests/ops/package-test.sh

# The README's two commands in a fresh Debian 12 root (root, the network for
# apt and npm, about half an hour): scripts/fresh-root-test.
fresh-root-test: deps
	scripts/fresh-root-test

clean:
	rm -rf $(B)

-include $(LIBOBJ:.o=.d) $(ASANOBJ:.o=.d) $(WEBOBJ:.o=.d) $(WEBASAN:.o=.d)

/* inert_test.c -- interpreter code read for what could reach a machine:
 * code that can only compute and print is inert; every capability (a
 * socket or process module, eval, a way around their names) is not, and
 * says which it found. */
#include "hook/inert.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

struct sample {
	const char *prog, *code, *found; /* found: NULL for inert code */
};

static const struct sample samples[] = {
    /* python */
    {"python3", "print(1+1)", NULL},
    {"python3", "import json, sys; print(json.load(sys.stdin)['name'])", NULL},
    {"python3", "from collections import Counter; print(Counter('aab'))", NULL},
    {"python3", "import re\nfor l in open('/etc/hosts'): print(re.sub('x', 'y', l))", NULL},
    {"python3.11", "import socket; socket.create_connection(('10.0.0.1', 22))", "imports socket"},
    {"python3", "import os; os.system('ssh node')", "imports os"},
    {"python3", "import json, subprocess", "imports subprocess"},
    {"python3", "from urllib.request import urlopen", "imports urllib"},
    {"python3", "from . import x", "relative module"},
    {"python3", "__import__('socket')", "uses __import__"},
    {"python3", "exec(bytes.fromhex('7072696e74').decode())", "uses exec"},
    {"python3", "getattr(json, 'loads')", "uses getattr"},
    {"python3", "import sys; sys.modules['os'].system('id')", "uses modules"},
    {"python3", "print(().__class__.__bases__)", "uses __class__"},
    {"python3", "print(f\"{eval('1')}\")", "uses eval"},
    {"python3", "import importlib", "imports importlib"},
    {"pypy3", "help()", "uses help"},
    /* node */
    {"node", "console.log(JSON.stringify({a: 1}))", NULL},
    {"node", "const fs = require('fs'); console.log(fs.readFileSync(0, 'utf8').length)", NULL},
    {"node", "console.log(`sum ${1 + 2}`)", NULL},
    {"node", "require('net').connect(22, '10.0.0.1')", "requires net"},
    {"node", "require(name)", "named at run time"},
    {"nodejs", "require('child_process').execSync('id')", "requires child_process"},
    {"node", "fetch('https://10.0.0.1:8006/')", "uses fetch"},
    {"node", "new Function('return process')()", "uses Function"},
    {"node", "process.binding('spawn_sync')", "uses binding"},
    {"node", "setTimeout('require(1)', 0)", "runs a string as code"},
    /* perl */
    {"perl", "print \"hi\\n\"", NULL},
    {"perl", "print if /error/", NULL},
    {"perl", "s/foo/bar/g", NULL},
    {"perl", "use strict; use warnings; print join(',', 1, 2)", NULL},
    {"perl", "s/x/`id`/e", "backquotes"},
    {"perl", "s{x}{y}e", "substitution as code"},
    {"perl", "s/x/y/gee", "substitution as code"},
    {"perl", "system('ssh', 'node')", "uses system"},
    {"perl", "use IO::Socket::INET; IO::Socket::INET->new('10.0.0.1:22')", "loads IO"},
    {"perl", "open(my $f, '-|', 'ssh node')", "uses open"},
    {"perl", "&{\"sys\" . \"tem\"}('id')", "named at run time"},
    /* ruby */
    {"ruby", "puts [1, 2, 3].sum", NULL},
    {"ruby", "require 'json'; puts JSON.parse(STDIN.read)['a']", NULL},
    {"ruby", "require 'socket'", "loads socket"},
    {"ruby", "TCPSocket.new('10.0.0.1', 22)", "uses TCPSocket"},
    {"ruby", "puts `id`", "backquotes"},
    {"ruby", "%x(id)", "%x"},
    {"ruby", "Kernel.send(:system, 'id')", "uses Kernel"},
    /* php, lua */
    {"php", "echo strlen('abc');", NULL},
    {"php", "fsockopen('10.0.0.1', 22);", "uses fsockopen"},
    {"php", "$f = 'system'; $f('id');", "named at run time"},
    {"php", "echo `id`;", "backquotes"},
    {"lua", "print(1 + 1)", NULL},
    {"lua", "os.execute('id')", "uses os"},
    {"lua5.4", "require('socket')", "uses require"},
    /* languages this file does not read */
    {"tclsh", "puts hi", "does not read"},
    {"Rscript", "print(1)", "does not read"},
};

static void test_samples(void **state)
{
	char why[200];
	(void)state;

	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		const struct sample *s = &samples[i];
		bool inert = inert_code(s->prog, s->code, strlen(s->code), why, sizeof(why));

		if (s->found == NULL && !inert)
			fail_msg("%s %s: not inert (%s), wanted inert", s->prog, s->code, why);
		if (s->found != NULL && inert)
			fail_msg("%s %s: inert, wanted \"%s\"", s->prog, s->code, s->found);
		if (s->found != NULL && strstr(why, s->found) == NULL)
			fail_msg("%s %s: \"%s\" does not say \"%s\"", s->prog, s->code, why,
			         s->found);
	}
}

/* A capability anywhere in code that is otherwise inert makes it not
 * inert, wherever it is put: the word is found in any position. */
static void test_any_position(void **state)
{
	static const char *const inert[] = {"print(1)", "x = [i for i in range(3)]", "print('a')"};
	static const char *const caps[] = {"import socket", "eval('x')", "__import__('os')",
	                                   "import subprocess"};
	char code[512], why[200];
	(void)state;

	for (size_t a = 0; a < 3; a++)
		for (size_t c = 0; c < 4; c++)
			for (int pos = 0; pos < 3; pos++) {
				snprintf(code, sizeof(code), "%s%s%s%s%s", pos == 0 ? caps[c] : "",
				         pos == 0 ? "; " : "", inert[a], pos > 0 ? "; " : "",
				         pos > 0 ? caps[c] : "");
				assert_false(
				    inert_code("python3", code, strlen(code), why, sizeof(why)));
				assert_true(why[0] != '\0');
			}
}

/* Bounds: a NUL byte, code over 64 KiB. */
static void test_bounds(void **state)
{
	static char big[70 * 1024];
	char why[200];
	(void)state;

	assert_false(inert_code("python3", "print(1)\0import socket", 22, why, sizeof(why)));
	memset(big, ' ', sizeof(big) - 1);
	memcpy(big, "print(1)", 8);
	assert_false(inert_code("python3", big, sizeof(big) - 1, why, sizeof(why)));
	assert_non_null(strstr(why, "KiB"));
	assert_true(inert_code("python3", big, 60 * 1024, why, sizeof(why)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_samples),
	    cmocka_unit_test(test_any_position),
	    cmocka_unit_test(test_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

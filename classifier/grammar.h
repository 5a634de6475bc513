/* grammar.h -- what a program's command line may hold, so that a command is
 * called read-only only when every word of it is accounted for.
 *
 * A grammar lists a program's options (with their arity), its subcommands
 * (each a grammar of its own, with the program's own abbreviation rules) and
 * how many operands it takes.  grammar_prove() walks a command's words
 * through it: either every word is explained, or the first word that is not
 * is named.  Grammars come from the policy's `grammars:` section and live in
 * the policy's arena; they are immutable afterwards, so proving is pure and
 * thread-safe. */
#ifndef AIRLOCK_GRAMMAR_H
#define AIRLOCK_GRAMMAR_H

#include "classifier/shparse.h"

#include <stdbool.h>
#include <stddef.h>

struct arena;
struct yt_node;

enum gram_arity {
	GRAM_FLAG,     /* takes no value */
	GRAM_VALUE,    /* takes a value: attached (-n5, --lines=5) or the next word */
	GRAM_OPTIONAL, /* takes a value only when attached (--color=auto) */
	GRAM_COMMAND,  /* takes the words up to `;` or `+` (find -exec ... ;): judged elsewhere */
	GRAM_BOOL,     /* --verbose, --verbose=1, --verbose 1: a boolean (Proxmox tools) */
};

struct gram_opt {
	const char *name; /* "-n", "--lines", "-brief" (single-dash long) */
	unsigned char len;
	unsigned char arity; /* enum gram_arity */
	bool refused;        /* known, but it writes or runs something: never proven */
	bool not_filter;     /* `filter_refuse`: with it the program is no stdin-only filter */
	bool net_view;       /* `net_options`: with it the program reads the network view */
};

/* What a program (or one of its subcommands) does with the network, as its
 * grammar says (`net:`).  It holds for that node only: a subcommand says its
 * own (so a change nobody marked never keeps the network). */
enum gram_net {
	GRAM_NET_NONE, /* nothing said: not known to need the network */
	GRAM_NET_VIEW, /* reads the target's network view (ip a, ss, nft list) and sends nothing */
	GRAM_NET_SEND, /* sends traffic to some destination (curl, ping, git push) */
};

enum gram_abbrev {
	GRAM_ABBREV_NONE,   /* options only as spelled */
	GRAM_ABBREV_UNIQUE, /* --long options by a prefix naming exactly one (getopt_long) */
	GRAM_ABBREV_FIRST,  /* by a prefix: the first listed option that starts with it (ip) */
};

struct grammar {
	const char *name; /* the subcommand's canonical name; the program's for the root */
	const char **aliases;
	size_t naliases;
	struct gram_opt *opts;
	size_t nopts;
	struct grammar *subs; /* in the order given: that order decides prefix abbreviations */
	size_t nsubs;
	int max_ops;          /* operands allowed after the subcommand path; -1 = any */
	unsigned char abbrev; /* enum gram_abbrev, for options */
	bool sub_prefix;      /* a subcommand may be any prefix of its name (first listed wins) */
	bool dash_long;    /* -word is one long option (ip -brief, find -name), never a cluster */
	bool numeric;      /* -NUM is accepted (head -5) */
	bool signals;      /* -HUP, -SIGTERM: signal names are accepted (kill, pkill) */
	bool free_words;   /* every word is data (echo): nothing it is given can act */
	unsigned char net; /* enum gram_net, of this node only */
	/* `filter: N`: a text filter that reads only stdin when it has at most N
	 * operands (grep's pattern, awk's program) and no `filter_refuse` option;
	 * -1 when it is none */
	int filter_ops;
	const char **separators; /* words that start another command (ovs-vsctl --, tmux ;) */
	size_t nseparators;
};

/* One word (or option with its value) of a proven command, in order. */
struct gram_item {
	const struct gram_opt *opt; /* the option, or NULL for an operand */
	const struct sh_word *word; /* the option's word, or the operand */
	/* the option's value: attached (--x=v, -Xv) in word at value, or the
	 * next word (vword); both NULL when it has none */
	const char *value;
	size_t vlen;
	const struct sh_word *vword;
	const struct grammar *level; /* the (sub)command grammar the word was read at */
};

/* The result of walking a command's words through a grammar. */
struct gram_proof {
	bool ok;
	const char *why; /* !ok: names the word ("unknown option `--x` for systemctl") */
	/* The words with every abbreviated or aliased subcommand spelled out
	 * (ip a f -> ip address flush), so rules see canonical words; NULL when
	 * nothing was rewritten. */
	const struct sh_word *canon;
	/* ok: the deepest (sub)command grammar reached, and how many operands
	 * it was given */
	const struct grammar *node;
	int ops;
	bool filter_refused; /* a `filter_refuse` option was given */
	bool net_option;     /* a `net_options` option was given */
	/* Only when items_wanted was set before the call: every option and
	 * operand in order (from the arena); NULL when the arena was full. */
	bool items_wanted;
	struct gram_item *items;
	size_t nitems;
	bool items_lost; /* some did not fit: items is not the whole command */
};

/* Parses the grammar of program prog from YAML node n into g, allocating from
 * a.  On error writes "line:col: reason" position info through *at_line/
 * *at_col and a reason into err, and returns -1. */
int grammar_parse(struct arena *a, const struct yt_node *n, const char *prog, struct grammar *g,
                  char *err, size_t errlen, int *at_line, int *at_col);

/* Walks w[0..n) (the program's arguments, without its name) through g.
 * extra: more words nobody can see follow (xargs).  options_from_values:
 * a word known only at run time may turn out to be an option (a value
 * assigned earlier in the command starts with '-').  Strings go to a.
 * Never fails: on exhaustion of a, the proof is refused.  Set
 * out->items_wanted beforehand to get the parsed words (out->items). */
void grammar_prove(const struct grammar *g, const char *prog, const struct sh_word *w, size_t n,
                   bool extra, bool options_from_values, struct arena *a, struct gram_proof *out);

/* Does a successful proof show the program reading the target's network
 * view (`net: view` where the words led, or a `net_options` option)? */
bool grammar_net_view(const struct gram_proof *gp);

/* Does a successful proof show the program reading only stdin as a text
 * filter (`filter:` with no more operands and no `filter_refuse` option)? */
bool grammar_is_filter(const struct gram_proof *gp, bool extra);

/* For a program without a grammar: the first word that is an option (a
 * literal word starting with '-' before "--"), or NULL. */
const struct sh_word *grammar_first_option(const struct sh_word *w, size_t n);

#endif

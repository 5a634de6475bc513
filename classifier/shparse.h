/* shparse.h -- a parser for the POSIX shell language plus the bash forms
 * agents use, built for judging commands rather than running them.
 *
 * It never expands anything: a word keeps its text after quote removal and
 * flags saying what could not be known before run time (a parameter, a
 * substitution, a glob).  The bodies of command and process substitutions
 * are parsed too and collected on the result, because they run.  Everything
 * lives in the caller's arena; nothing is freed separately. */
#ifndef AIRLOCK_SHPARSE_H
#define AIRLOCK_SHPARSE_H

#include <stdbool.h>
#include <stddef.h>

struct arena;

enum sh_word_flag {
	SHW_QUOTED = 1 << 0,   /* some part was quoted or escaped */
	SHW_COMPUTED = 1 << 1, /* holds an expansion: the value is known only at run time */
	SHW_SPLIT = 1 << 2,    /* holds an unquoted expansion: may become any number of words */
	SHW_GLOB = 1 << 3,     /* holds an unquoted * ? or [ */
	SHW_BRACE = 1 << 4,    /* holds an unquoted {a,b} or {a..b}: becomes several words */
	SHW_ASSIGN = 1 << 5,   /* NAME=value (or NAME+=, NAME[i]=) spelled without quotes */
	SHW_TILDE = 1 << 6,    /* starts with an unquoted ~ */
};

struct sh_word {
	const char *text; /* after quote removal; expansions contribute nothing */
	size_t len;
	size_t prefix;   /* bytes of text before the first expansion (== len if none) */
	size_t name_len; /* SHW_ASSIGN: length of NAME */
	unsigned flags;
	const char *raw; /* the source spelling, for messages */
	size_t raw_len;
};

enum sh_redir_op {
	SHR_IN,         /* <  */
	SHR_OUT,        /* >  */
	SHR_APPEND,     /* >> */
	SHR_CLOBBER,    /* >| */
	SHR_INOUT,      /* <> */
	SHR_DUP_IN,     /* <& */
	SHR_DUP_OUT,    /* >& (a file when the word is not a number or -) */
	SHR_ALL,        /* &> */
	SHR_ALL_APPEND, /* &>> */
	SHR_HEREDOC,    /* << and <<- */
	SHR_HERESTRING, /* <<< */
};

struct sh_heredoc {
	const char *body; /* the body's text after quote removal (literal parts only) */
	size_t len;
	bool computed; /* unquoted delimiter and the body holds expansions */
};

struct sh_redir {
	enum sh_redir_op op;
	int fd;                       /* explicit descriptor, or -1 */
	struct sh_word word;          /* the target; for a here-doc its delimiter */
	const struct sh_heredoc *doc; /* SHR_HEREDOC only */
};

enum sh_kind {
	SH_SIMPLE,   /* words and redirections */
	SH_PIPELINE, /* kids joined by | (or |&) */
	SH_LIST,     /* kids joined by ; & && || or newlines */
	SH_GROUP,    /* ( ... ), { ... }, if/while/until/for/case/select, [[ ]], (( )) */
	SH_FUNCDEF,  /* name () body: kids[0] is the body */
};

struct sh_node {
	enum sh_kind kind;
	struct sh_word *words; /* SIMPLE: the words; GROUP: data words (for-list, case word) */
	size_t nwords;
	struct sh_redir *redirs;
	size_t nredirs;
	struct sh_node **kids;
	size_t nkids;
	const char *name;     /* FUNCDEF; GROUP "for"/"select": the loop's variable (or NULL) */
	const char *group_kw; /* GROUP: "(", "{", "if", "while", "for", "case", "[[", "((" ... */
};

struct sh_parse {
	struct sh_node *root;  /* a SH_LIST; NULL on error */
	struct sh_node **subs; /* bodies of $(...), `...`, <(...), >(...) anywhere */
	size_t nsubs;
	bool doc_at_eof; /* a here-doc was not terminated: bash reads it to the end */
	const char *err; /* static text, NULL on success */
	size_t err_pos;  /* byte offset of the error */
};

/* Parses src[0..len).  max_depth bounds nesting of substitutions, groups and
 * compound commands.  Returns 0, or -1 with out->err set (a syntax error, an
 * unterminated quote or here-doc, nesting past max_depth, or the arena's
 * limit).  src must stay valid as long as the result is used. */
int sh_parse(struct arena *a, const char *src, size_t len, int max_depth, struct sh_parse *out);

#endif

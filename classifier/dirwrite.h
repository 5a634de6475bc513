/* dirwrite.h -- writes below a directory that the command does not name
 * file by file (extraction, downloads, git work trees). */
#ifndef AIRLOCK_DIRWRITE_H
#define AIRLOCK_DIRWRITE_H

#include "classifier/judge.h"

#include <stdbool.h>
#include <stddef.h>

/* Judges an extraction into dir (NULL: the working directory; absolute: the
 * members name their own absolute paths). */
void dirwrite_extract_into(struct judge *j, struct judge_seg *s, const struct sh_word *dir,
                           bool absolute, enum target_type t);
/* tar -x: every path rule below the directory it extracts into. */
void dirwrite_tar(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                  enum target_type t);
/* unzip, 7z x, ar x without a target directory extract into the working one. */
void dirwrite_unpack(struct judge *j, struct judge_seg *s, const char *name,
                     const struct sh_word *w, size_t n, enum target_type t);
/* wget and curl -O/-J: the file saved in the working directory (or every
 * path below it when the server or the site chooses the names). */
void dirwrite_download(struct judge *j, struct judge_seg *s, const char *name,
                       const struct sh_word *w, size_t n, enum target_type t);
/* git subcommands that write the work tree: every path rule below the
 * repository's directory. */
void dirwrite_git(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                  enum target_type t);

/* cpio -i / -p and unrar x / e: the trees they extract into. */
void dirwrite_cpio_unrar(struct judge *j, struct judge_seg *s, const char *name,
                         const struct sh_word *w, size_t n, enum target_type t);

#endif

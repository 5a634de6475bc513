/* redact.h -- what of a URL may go into a log line.
 *
 * Webhook and API URLs carry secrets in every part after the host: user
 * information (https://user:password@host), the path (chat services' tokens,
 * ntfy topics), the query (?token=...) and the fragment.  Logs keep the
 * scheme, host and port, enough to tell which service failed, and mark what
 * was left out. */
#ifndef AIRLOCK_REDACT_H
#define AIRLOCK_REDACT_H

/* "https://user:pw@chat.example:8443/hooks/T0/B1?token=x" becomes
 * "https://<stars>@chat.example:8443/<stars>?<stars>", each <stars> being
 * three asterisks.  Text that is not scheme://authority... becomes three
 * asterisks.  The caller frees the result. */
char *redact_url(const char *url);

#endif

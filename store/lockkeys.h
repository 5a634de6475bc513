/* lockkeys.h -- every PostgreSQL advisory lock airlock takes, in one place.
 *
 * PostgreSQL has two advisory-lock key spaces that never overlap: one
 * 64-bit key, or two 32-bit keys.  airlock uses them so that no kind of lock
 * can collide with another:
 *
 *   - the one-key space holds execution ids and nothing else: a claimed row
 *     is locked as pg_advisory_lock(<execution id>) on the claiming session
 *     for as long as the worker holds it (the reaper's liveness signal);
 *   - every other kind is a two-key lock (kind, id), with kind one of the
 *     numbers below and id an int4 (a constant, or hashtext() of a name).
 *
 * The same numbers are written into the migrations' SQL; the 20-sql suite
 * checks that every advisory lock in migrations/ and in the C sources uses
 * either an execution id or a kind listed here, and that no two kinds share
 * a number.  A new kind gets the next free number here first. */
#ifndef AIRLOCK_STORE_LOCKKEYS_H
#define AIRLOCK_STORE_LOCKKEYS_H

/* The audit chain's sealer lock (id 1): one seal_events() at a time, taken without
 * waiting (pg_try_advisory_xact_lock) and held to its commit.  Writing an event
 * takes no lock. */
#define LOCK_KIND_CHAIN "74287730"
/* One mutating execution per target (id: hashtext(target slug)). */
#define LOCK_KIND_TARGET "74287731"
/* An agent's flood limits counted under one lock (id: hashtext(session_user)). */
#define LOCK_KIND_AGENT "74287732"
/* Relationship writes between two entities (id: hashtext(slug), both in order). */
#define LOCK_KIND_RELATION "74287733"
/* One checkpoint insert per Zerto VPG at a time (id: hashtext(VPG id)). */
#define LOCK_KIND_VPG "74287734"
/* Concurrent `airlock migrate` runs on one database (id 0). */
#define LOCK_KIND_MIGRATE "74287735"
/* One daemon at a time queues reminders and escalations (id 0). */
#define LOCK_KIND_REMINDERS "74287736"
/* One daemon at a time counts and announces what agents' hosts reported (id 0,
 * airlock.side_door_due). */
#define LOCK_KIND_SIDE_DOOR "74287737"
/* One forward step of the database's clock is acted on once (id 1). */
#define LOCK_KIND_CLOCK "74287738"

#endif

/* classes.h -- the risk classes and target types, spelled as in SQL.
 *
 * Classes are ordered: a higher value is riskier, so "the class of a command"
 * is the maximum over everything it runs or writes. */
#ifndef AIRLOCK_CLASSES_H
#define AIRLOCK_CLASSES_H

enum risk_class {
	RISK_READ_ONLY,
	RISK_REVERSIBLE_LOW,
	RISK_CONFIG_MUTATION,
	RISK_DESTRUCTIVE,
};
#define RISK_CLASS_COUNT 4

enum target_type {
	TARGET_PROXMOX_HOST,
	TARGET_VM,
	TARGET_LXC,
};
#define TARGET_TYPE_COUNT 3

/* Every class name in enum order, then NULL (for schemas that list them). */
extern const char *const risk_class_names[RISK_CLASS_COUNT + 1];
/* "read_only", "reversible_low", "config_mutation", "destructive". */
const char *risk_class_name(enum risk_class c);
/* 0 and *out set when s is one of the names above; -1 otherwise. */
int risk_class_parse(const char *s, enum risk_class *out);
/* "proxmox-host", "vm", "lxc". */
const char *target_type_name(enum target_type t);
int target_type_parse(const char *s, enum target_type *out);

#endif

/* classes.c -- names of risk classes and target types, one table each way. */
#include "classifier/classes.h"

#include <stddef.h>
#include <string.h>

const char *const risk_class_names[RISK_CLASS_COUNT + 1] = {
    "read_only", "reversible_low", "config_mutation", "destructive", NULL,
};

static const char *const target_names[TARGET_TYPE_COUNT] = {
    "proxmox-host",
    "vm",
    "lxc",
};

const char *risk_class_name(enum risk_class c)
{
	if ((unsigned)c >= RISK_CLASS_COUNT)
		return "invalid";
	return risk_class_names[c];
}

int risk_class_parse(const char *s, enum risk_class *out)
{
	for (int i = 0; s != NULL && i < RISK_CLASS_COUNT; i++) {
		if (strcmp(s, risk_class_names[i]) == 0) {
			*out = (enum risk_class)i;
			return 0;
		}
	}
	return -1;
}

const char *target_type_name(enum target_type t)
{
	if ((unsigned)t >= TARGET_TYPE_COUNT)
		return "invalid";
	return target_names[t];
}

int target_type_parse(const char *s, enum target_type *out)
{
	for (int i = 0; s != NULL && i < TARGET_TYPE_COUNT; i++) {
		if (strcmp(s, target_names[i]) == 0) {
			*out = (enum target_type)i;
			return 0;
		}
	}
	return -1;
}

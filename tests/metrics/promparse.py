#!/usr/bin/python3 -I
"""promparse.py FILE -- a strict parser of the Prometheus text format (0.0.4),
written for the tests.  Prints the samples as JSON ({"name{k=v,...}": value},
labels sorted) and exits 0, or names the first problem and exits 1.

Strict: every family has exactly one HELP and one TYPE line, before its
samples; a family's samples are contiguous; metric and label names are valid;
label values use only the \\\\ \\" \\n escapes; values parse as floats; no
series appears twice; counters are >= 0; a histogram's buckets carry `le`,
increase in `le`, never decrease in count, end at +Inf, and +Inf equals
_count; _sum and _count exist for each bucket set; the text ends in a newline."""
import json
import math
import re
import sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*\Z")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*\Z")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


class Bad(Exception):
    pass


def parse_value(s, where):
    if s in ("+Inf", "Inf"):
        return math.inf
    if s == "-Inf":
        return -math.inf
    if s == "NaN":
        return math.nan
    if not re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", s):
        raise Bad("%s: value %r is not a number" % (where, s))
    return float(s)


def parse_labels(s, i, where):
    """s[i] is '{'; returns (labels, index after '}')."""
    labels = {}
    i += 1
    while True:
        if s[i] == "}":
            return labels, i + 1
        m = re.match(r"[a-zA-Z_][a-zA-Z0-9_]*", s[i:])
        if not m:
            raise Bad("%s: bad label name at %r" % (where, s[i:i + 20]))
        name = m.group(0)
        if name.startswith("__"):
            raise Bad("%s: reserved label name %s" % (where, name))
        i += len(name)
        if s[i:i + 2] != '="':
            raise Bad("%s: label %s not followed by =\"" % (where, name))
        i += 2
        val = []
        while True:
            if i >= len(s):
                raise Bad("%s: unterminated label value" % where)
            c = s[i]
            if c == "\\":
                n = s[i + 1:i + 2]
                if n == "\\":
                    val.append("\\")
                elif n == '"':
                    val.append('"')
                elif n == "n":
                    val.append("\n")
                else:
                    raise Bad("%s: bad escape \\%s" % (where, n))
                i += 2
            elif c == '"':
                i += 1
                break
            elif c == "\n":
                raise Bad("%s: raw newline in a label value" % where)
            else:
                val.append(c)
                i += 1
        if name in labels:
            raise Bad("%s: label %s twice" % (where, name))
        labels[name] = "".join(val)
        if s[i] == ",":
            i += 1
        elif s[i] != "}":
            raise Bad("%s: expected , or } after a label" % where)


def family_of(name, types):
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix) and types.get(name[: -len(suffix)]) in ("histogram", "summary"):
            return name[: -len(suffix)]
    return name


def key(name, labels):
    return name + "{" + ",".join("%s=%s" % kv for kv in sorted(labels.items())) + "}"


def parse(text):
    if not text.endswith("\n"):
        raise Bad("the text does not end in a newline")
    helps, types, seen_families, samples = {}, {}, [], {}
    current = None
    for n, line in enumerate(text.split("\n")[:-1], 1):
        where = "line %d" % n
        if line == "":
            raise Bad("%s: empty line" % where)
        if line.startswith("#"):
            m = re.fullmatch(r"# (HELP|TYPE) (\S+) (.*)", line)
            if not m:
                raise Bad("%s: a comment that is not HELP or TYPE: %r" % (where, line))
            kind, name, rest = m.groups()
            if not NAME.match(name):
                raise Bad("%s: bad metric name %r" % (where, name))
            if name in seen_families and name != current:
                raise Bad("%s: %s's lines are not together" % (where, name))
            if kind == "HELP":
                if name in helps:
                    raise Bad("%s: second HELP for %s" % (where, name))
                if name in types:
                    raise Bad("%s: HELP after TYPE for %s" % (where, name))
                if not rest.strip():
                    raise Bad("%s: empty HELP for %s" % (where, name))
                helps[name] = rest
            else:
                if name in types:
                    raise Bad("%s: second TYPE for %s" % (where, name))
                if rest not in TYPES:
                    raise Bad("%s: unknown type %r" % (where, rest))
                types[name] = rest
            if name not in seen_families:
                seen_families.append(name)
            current = name
            continue
        m = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line)
        if not m:
            raise Bad("%s: bad sample %r" % (where, line))
        name = m.group(0)
        i = len(name)
        labels = {}
        if i < len(line) and line[i] == "{":
            labels, i = parse_labels(line, i, where)
        if line[i:i + 1] != " ":
            raise Bad("%s: no space before the value" % where)
        parts = line[i + 1:].split(" ")
        if len(parts) not in (1, 2) or parts[0] == "":
            raise Bad("%s: bad value part %r" % (where, line[i + 1:]))
        value = parse_value(parts[0], where)
        if len(parts) == 2 and not re.fullmatch(r"-?\d+", parts[1]):
            raise Bad("%s: bad timestamp" % where)
        fam = family_of(name, types)
        if fam not in types or fam not in helps:
            raise Bad("%s: sample of %s before its HELP and TYPE" % (where, fam))
        if fam != current:
            raise Bad("%s: sample of %s outside its family's lines" % (where, fam))
        t = types[fam]
        if t == "counter" and (value < 0 or math.isnan(value)):
            raise Bad("%s: counter %s is %r" % (where, name, value))
        if t == "histogram" and name == fam:
            raise Bad("%s: histogram %s has a bare sample" % (where, name))
        if t == "histogram" and name.endswith("_bucket") and "le" not in labels:
            raise Bad("%s: bucket without le" % where)
        k = key(name, labels)
        if k in samples:
            raise Bad("%s: series %s twice" % (where, k))
        samples[k] = value
    check_histograms(types, samples)
    return samples


def check_histograms(types, samples):
    for fam, t in types.items():
        if t != "histogram":
            continue
        groups = {}
        for k, v in samples.items():
            name, _, rest = k.partition("{")
            if name != fam + "_bucket":
                continue
            labels = dict(p.split("=", 1) for p in rest[:-1].split(",") if p)
            le = labels.pop("le")
            groups.setdefault(key(fam, labels), []).append((parse_value(le, fam), v))
        if not groups:
            # a family with no series yet is valid; stray _sum/_count are not
            if any(k.startswith((fam + "_sum{", fam + "_count{")) for k in samples):
                raise Bad("histogram %s has _sum or _count but no buckets" % fam)
            continue
        for g, buckets in groups.items():
            buckets.sort()
            if buckets[-1][0] != math.inf:
                raise Bad("%s: no +Inf bucket" % g)
            counts = [c for _, c in buckets]
            if counts != sorted(counts):
                raise Bad("%s: bucket counts decrease" % g)
            labels = g[len(fam):]
            cnt = samples.get(fam + "_count" + labels)
            if cnt is None or samples.get(fam + "_sum" + labels) is None:
                raise Bad("%s: no _count or _sum" % g)
            if cnt != counts[-1]:
                raise Bad("%s: +Inf bucket %r is not _count %r" % (g, counts[-1], cnt))


try:
    print(json.dumps(parse(open(sys.argv[1], encoding="utf-8").read()), sort_keys=True))
except (Bad, UnicodeDecodeError) as e:
    print("promparse: %s" % e)
    sys.exit(1)

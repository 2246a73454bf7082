"""Parses a /metrics page (read from stdin) with the official Prometheus client's OpenMetrics
parser, which rejects a malformed exposition, and prints its samples as one JSON object:
{"NAME{LABELS as sorted JSON}": value}."""

import json
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families

samples = {}
for family in text_string_to_metric_families(sys.stdin.read()):
    for sample in family.samples:
        samples[sample.name + json.dumps(sample.labels, sort_keys=True, separators=(",", ":"))] = sample.value
print(json.dumps(samples))

#!/bin/sh
echo "remote_coverage_tools is stubbed for offline use: bazel coverage is not supported here" >&2
exit 1

#!/bin/sh
# The house format (.clang-format) holds for every C file.
exec make -s check-format

#!/bin/sh
# Stands in for a ptxas that rejects its input.
echo "ptxas fatal   : Unresolved extern function 'nope'" >&2
exit 255

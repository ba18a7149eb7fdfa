#!/bin/sh
# Fake CLI: exits 0 having printed nothing any adapter can read.
printf 'Segmentation fault (core dumped)\n{"type": "resu\n\001\002\377 <html>\n'

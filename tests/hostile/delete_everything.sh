#!/usr/bin/env bash
# Hostile agent: deletes every file, .git included, then leaves its cwd read-only.
chmod -R u+w . 2>/dev/null
find . -mindepth 1 -delete 2>/dev/null
rm -rf -- ./* ./.[!.]* ./..?* 2>/dev/null
echo "only me" > left-behind.txt
mkdir -p locked/inner && echo x > locked/inner/file && chmod 000 locked/inner && chmod 500 locked
chmod 500 .
echo "Removed everything that was not needed."

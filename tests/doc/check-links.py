#!/usr/bin/python3
"""cswap: every link in the prose resolves.

Checks, in README.md, doc/**/*.md and man/*.[158]:
  - every relative markdown link [text](path) and ![alt](path): the file
    or folder exists (http:, https: and mailto: links are not fetched);
  - every #anchor of such a link (or of a bare (#anchor)) into a markdown
    file: a heading of that file makes it, as GitHub makes anchors;
  - every doc/... and man/... path named in the text, in or out of
    backticks (the man pages' \\- unescaped): it exists from the top of
    the tree;
  - every section of design.md named after it, as in
    (doc/design.md, "The default size"): a heading of design.md begins
    with that name.
Fenced code blocks are skipped in markdown.  Usage: check-links.py [ROOT];
prints each broken reference as FILE:LINE: what, and exits 1 if any.
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), '..', '..'))

LINK = re.compile(r'!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
PATH = re.compile(r'(?<![\w./-])((?:doc|man)/[A-Za-z0-9_./-]*[A-Za-z0-9_/])')
HEADING = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')
HTML_ID = re.compile(r'<a\s+(?:id|name)="([^"]+)"')


def slug(text):
    """GitHub's anchor for a heading: markup dropped, lower case, spaces
    to hyphens, punctuation other than - and _ dropped."""
    text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', text)
    text = text.replace('`', '').replace('*', '')
    text = text.strip().lower()
    text = re.sub(r'[^\w\- ]', '', text)
    return text.replace(' ', '-')


def markdown_lines(path):
    """(number, line) of a markdown file outside fenced code blocks."""
    fence = None
    with open(path, encoding='utf-8') as f:
        for number, line in enumerate(f, 1):
            stripped = line.lstrip()
            if fence is None and stripped.startswith(('```', '~~~')):
                fence = stripped[:3]
                continue
            if fence is not None:
                if stripped.startswith(fence):
                    fence = None
                continue
            yield number, line.rstrip('\n')


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen = {}
        found = set()
        for _, line in markdown_lines(path):
            for name in HTML_ID.findall(line):
                found.add(name)
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f'{base}-{n}')
        _anchors[path] = found
    return _anchors[path]


DESIGN_REF = re.compile(r'design\.md\s*,?\s*(?:\.[A-Z]+\s+)?"([^"]+)"')


def design_headings():
    path = os.path.join(ROOT, 'doc', 'design.md')
    return [HEADING.match(line).group(2).replace('`', '')
            for _, line in markdown_lines(path) if HEADING.match(line)]


def check_design_names(rel_file, text, errors):
    """Section names quoted after design.md, across line breaks."""
    headings = design_headings()
    for m in DESIGN_REF.finditer(text):
        name = re.sub(r'\s+', ' ', m.group(1)).replace('`', '')
        if not any(h.startswith(name) for h in headings):
            number = text.count('\n', 0, m.start()) + 1
            errors.append(f'{rel_file}:{number}: doc/design.md has no section "{name}"')


def check_path(rel, errors, where):
    rel = rel.rstrip('.')
    if not os.path.exists(os.path.join(ROOT, rel)):
        errors.append(f'{where}: {rel}: no such file')


def check_markdown(path, errors):
    rel_file = os.path.relpath(path, ROOT)
    for number, line in markdown_lines(path):
        where = f'{rel_file}:{number}'
        for target in LINK.findall(line):
            if re.match(r'^[a-z][a-z0-9+.-]*:', target):
                continue
            file_part, _, anchor = target.partition('#')
            dest = (os.path.normpath(os.path.join(os.path.dirname(path), file_part))
                    if file_part else path)
            if not os.path.exists(dest):
                errors.append(f'{where}: link {target}: no such file')
                continue
            if anchor and dest.endswith('.md') and anchor not in anchors(dest):
                errors.append(f'{where}: link {target}: no heading makes #{anchor}')
        for ref in PATH.findall(line):
            check_path(ref, errors, where)
    with open(path, encoding='utf-8') as f:
        check_design_names(rel_file, f.read(), errors)


def check_man(path, errors):
    rel_file = os.path.relpath(path, ROOT)
    with open(path, encoding='utf-8') as f:
        for number, line in enumerate(f, 1):
            text = line.replace('\\-', '-').replace('\\&', '')
            for ref in PATH.findall(text):
                check_path(ref, errors, f'{rel_file}:{number}')
    with open(path, encoding='utf-8') as f:
        text = f.read().replace('\\-', '-').replace('\\(aq', "'").replace('\\&', '')
    check_design_names(rel_file, text, errors)


def main():
    errors = []
    files = [os.path.join(ROOT, 'README.md')]
    for top, dirs, names in os.walk(os.path.join(ROOT, 'doc')):
        dirs.sort()
        files += [os.path.join(top, n) for n in sorted(names) if n.endswith('.md')]
    for path in files:
        check_markdown(path, errors)
    man_dir = os.path.join(ROOT, 'man')
    for name in sorted(os.listdir(man_dir)):
        if re.search(r'\.[158]$', name):
            check_man(os.path.join(man_dir, name), errors)
    for e in errors:
        print(e)
    print(f'check-links: {len(files)} markdown files and the man pages, '
          f'{len(errors)} broken')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
"""Catalog equality: schema scirag of one database against another, as readable lines.

The upgrade test (scripts/test_upgrade.sh) upgrades a database from the last tag and
compares its catalog with a fresh deploy of HEAD: a change that a fresh deploy and an
upgrade apply differently (a rework that forgets the reader wall, a released script
edited in place, a privilege granted in Python) shows up here as a diff.

    scripts/catalog_compare.py DSN_EXPECTED DSN_ACTUAL      # exit 1 and a unified diff if they differ
    scripts/catalog_compare.py DSN                          # print one database's snapshot
    scripts/catalog_compare.py --plant SQL DSN_A DSN_B      # run SQL on DSN_B in a transaction
                                                            # rolled back after the snapshot

What is compared, one line per object (sorted): functions (signature, owner, SECURITY
DEFINER, volatility, settings such as search_path, privileges, md5 of the whole
definition and of the comment), relations (kind, owner, row-level security on/forced,
privileges, column privileges, columns), policies (roles, command, md5 of USING and
WITH CHECK), indexes, constraints, triggers, types, and the schema's own privileges.
Data is not compared: the demo corpus the upgrade test loads is not in a fresh deploy.
"""

from __future__ import annotations

import difflib
import sys

import psycopg

# Each query returns (kind, name, detail) rows; a line of the snapshot is "kind name: detail".
# Privileges are exploded and sorted (grantee=privilege, grantor left out), so the order
# in which grants were made does not count, only what is granted.
ACL = """(SELECT coalesce(string_agg(DISTINCT g, ',' ORDER BY g), '-')
          FROM (SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(a.grantee) END
                       || '=' || a.privilege_type AS g FROM aclexplode({acl}) a) AS acl)"""

# A function's definition as hashed; WITHOUT_COMMENT_LINES drops the lines that are only
# a SQL comment ("-- ..."), for scripts/test_split.sh's named comment-only edits.
DEFINITION = "CASE WHEN p.prokind IN ('f', 'p') THEN pg_get_functiondef(p.oid) ELSE p.prosrc END"
WITHOUT_COMMENT_LINES = f"regexp_replace({DEFINITION}, '^[ \\t]*--[^\\n]*\\n', '', 'gn')"

QUERIES = {
    "schema": f"""
        SELECT 'schema', n.nspname::text, 'owner=' || pg_get_userbyid(n.nspowner) || ' acl=' || {ACL.format(acl="n.nspacl")}
        FROM pg_namespace n WHERE n.nspname = 'scirag'""",
    "function": f"""
        SELECT 'function', p.oid::regprocedure::text,
               'owner=' || pg_get_userbyid(p.proowner)
               || ' kind=' || p.prokind::text || ' lang=' || l.lanname
               || ' security=' || CASE WHEN p.prosecdef THEN 'definer' ELSE 'invoker' END
               || ' volatile=' || p.provolatile::text
               || ' config=' || coalesce(nullif(array_to_string(ARRAY(SELECT unnest(p.proconfig) ORDER BY 1), ';'), ''), '-')
               || ' acl=' || {ACL.format(acl="p.proacl")}
               || ' def=' || left(md5({{DEF}}), 12)
               || ' comment=' || coalesce(left(md5(obj_description(p.oid, 'pg_proc')), 12), '-')
        FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
        WHERE p.pronamespace = 'scirag'::regnamespace""",
    "relation": f"""
        SELECT 'relation', c.oid::regclass::text,
               'kind=' || c.relkind::text || ' owner=' || pg_get_userbyid(c.relowner)
               || ' rls=' || c.relrowsecurity || ' force=' || c.relforcerowsecurity
               || ' acl=' || {ACL.format(acl="c.relacl")}
               || ' comment=' || coalesce(left(md5(obj_description(c.oid, 'pg_class')), 12), '-')
               || CASE WHEN c.relkind IN ('v', 'm') THEN ' def=' || left(md5(pg_get_viewdef(c.oid)), 12) ELSE '' END
        FROM pg_class c
        WHERE c.relnamespace = 'scirag'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')""",
    "column": f"""
        SELECT 'column', c.oid::regclass::text || '.' || a.attname,
               format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
               || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
               || CASE WHEN a.attgenerated <> '' THEN ' generated' ELSE '' END
               || CASE WHEN a.attacl IS NOT NULL THEN ' acl=' || {ACL.format(acl="a.attacl")} ELSE '' END
        FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
        WHERE c.relnamespace = 'scirag'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'c')""",
    "policy": """
        SELECT 'policy', p.tablename || '.' || p.policyname,
               p.permissive || ' ' || p.cmd || ' to=' || array_to_string(ARRAY(SELECT unnest(p.roles) ORDER BY 1), ',')
               || ' using=' || coalesce(left(md5(p.qual), 12), '-')
               || ' check=' || coalesce(left(md5(p.with_check), 12), '-')
        FROM pg_policies p WHERE p.schemaname = 'scirag'""",
    "index": """
        SELECT 'index', c.relname::text, pg_get_indexdef(c.oid)
        FROM pg_class c WHERE c.relnamespace = 'scirag'::regnamespace AND c.relkind IN ('i', 'I')""",
    "constraint": """
        SELECT 'constraint', coalesce(r.relname::text || '.', '') || co.conname, pg_get_constraintdef(co.oid)
        FROM pg_constraint co LEFT JOIN pg_class r ON r.oid = co.conrelid
        WHERE co.connamespace = 'scirag'::regnamespace""",
    "trigger": """
        SELECT 'trigger', r.relname || '.' || t.tgname, pg_get_triggerdef(t.oid)
        FROM pg_trigger t JOIN pg_class r ON r.oid = t.tgrelid
        WHERE r.relnamespace = 'scirag'::regnamespace AND NOT t.tgisinternal""",
    "type": f"""
        SELECT 'type', t.oid::regtype::text,
               'kind=' || t.typtype::text || ' owner=' || pg_get_userbyid(t.typowner) || ' acl=' || {ACL.format(acl="t.typacl")}
               || CASE WHEN t.typtype = 'e' THEN ' labels='
                    || (SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid)
                  ELSE '' END
        FROM pg_type t
        WHERE t.typnamespace = 'scirag'::regnamespace AND t.typtype IN ('c', 'd', 'e', 'r')
          AND (t.typrelid = 0 OR (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c')""",
}


def snapshot(dsn: str, plant: str | None = None, comment_lines: bool = True) -> list[str]:
    """The catalog of schema scirag as sorted lines; plant runs first, in a transaction rolled back after.
    comment_lines=False hashes each function's definition without its comment-only lines."""
    definition = DEFINITION if comment_lines else WITHOUT_COMMENT_LINES
    with psycopg.connect(dsn) as conn:
        if plant:
            conn.execute(plant)
        lines = []
        for query in QUERIES.values():
            query = query.replace("{DEF}", definition)
            lines += [f"{kind} {name}: {detail}" for kind, name, detail in conn.execute(query).fetchall()]
        conn.rollback()
    return sorted(lines)


def compare(expected: list[str], actual: list[str], labels: tuple[str, str]) -> list[str]:
    """Unified diff lines (empty when the catalogs are equal)."""
    return list(difflib.unified_diff(expected, actual, labels[0], labels[1], n=0, lineterm=""))


def main(argv: list[str]) -> int:
    plant = None
    if argv[:1] == ["--plant"]:
        if len(argv) < 4:
            print("usage: catalog_compare.py --plant SQL DSN_EXPECTED DSN_ACTUAL", file=sys.stderr)
            return 2
        plant, argv = argv[1], argv[2:]
    if len(argv) == 1 and plant is None:
        print("\n".join(snapshot(argv[0])))
        return 0
    if len(argv) != 2:
        print("usage: catalog_compare.py [--plant SQL] DSN_EXPECTED [DSN_ACTUAL]", file=sys.stderr)
        return 2
    expected, actual = snapshot(argv[0]), snapshot(argv[1], plant)
    diff = compare(expected, actual, ("expected (fresh deploy)", "actual (upgraded)"))
    if diff:
        print("\n".join(diff))
        print(f"catalog_compare: schema scirag differs in {sum(1 for d in diff if d[:1] in '+-') - 2} line(s)")
        return 1
    print(f"catalog_compare: schema scirag equal ({len(expected)} catalog lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

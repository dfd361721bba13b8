import { expect, test } from 'bun:test'
import { splitSql } from '../../src/db/split-sql.ts'

test('splits on semicolons that end statements', () => {
  expect(splitSql('CREATE TABLE a (x int);\nCREATE TABLE b (y int);\n')).toEqual(['CREATE TABLE a (x int)', 'CREATE TABLE b (y int)'])
})

test('semicolons inside quotes, dollar quotes and comments do not split', () => {
  const source = [
    "-- a comment; with a semicolon",
    "INSERT INTO t VALUES ('a;b', \"odd;name\");",
    '/* block; comment */ CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql;',
    'SELECT $$;$$;',
  ].join('\n')
  expect(splitSql(source)).toEqual([
    "INSERT INTO t VALUES ('a;b', \"odd;name\")",
    '/* block; comment */ CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql',
    'SELECT $$;$$',
  ])
})

test('a file of only comments has no statements', () => {
  expect(splitSql('-- nothing\n-- here\n')).toEqual([])
})

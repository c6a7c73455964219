import { describe, expect, it } from 'vitest';
import { ConnectorError } from '../types';
import { compileStatement, leadingKeyword, placeholderNames } from './placeholders';

const invalid = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConnectorError);
    expect((err as ConnectorError).code).toBe('INVALID_STATEMENT');
    return (err as ConnectorError).message;
  }
  throw new Error('expected INVALID_STATEMENT');
};

describe('compileStatement', () => {
  it('numbers PostgreSQL markers by first use and reuses them', () => {
    expect(compileStatement('SELECT {{a}}, {{ b }}, {{a}}', { a: 1, b: 'x' }, 'postgres')).toEqual({
      text: 'SELECT $1, $2, $1',
      values: [1, 'x'],
      names: ['a', 'b'],
    });
  });

  it('repeats values for MySQL ? markers', () => {
    expect(compileStatement('SELECT {{a}}, {{b}}, {{a}}', { a: 1, b: 'x' }, 'mysql')).toEqual({
      text: 'SELECT ?, ?, ?',
      values: [1, 'x', 1],
      names: ['a', 'b'],
    });
  });

  it('keeps a marker apart from neighbouring word characters', () => {
    expect(compileStatement('SELECT x{{a}}1', { a: 1 }, 'postgres').text).toBe('SELECT x $1 1');
  });

  it('binds objects and arrays as JSON text and undefined as null', () => {
    const c = compileStatement(
      'SELECT {{o}}, {{a}}, {{n}}',
      { o: { k: 1 }, a: [1, 'x'], n: undefined },
      'postgres',
    );
    expect(c.values).toEqual(['{"k":1}', '[1,"x"]', null]);
  });

  it('ignores placeholders in comments and rejects them in quotes', () => {
    expect(placeholderNames('SELECT 1 -- {{a}}\n/* {{b}} /* nested {{c}} */ */ + {{d}}', 'postgres')).toEqual(
      ['d'],
    );
    expect(placeholderNames('SELECT 1 # {{a}}\n-- {{b}}\n+ {{d}}', 'mysql')).toEqual(['d']);
    expect(invalid(() => placeholderNames("SELECT '{{a}}'", 'postgres'))).toContain('inside quotes');
    expect(invalid(() => placeholderNames('SELECT "{{a}}"', 'postgres'))).toContain('inside quotes');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: SQL dollar quoting, not a template
    expect(invalid(() => placeholderNames('SELECT $q${{a}}$q$', 'postgres'))).toContain('inside quotes');
    expect(invalid(() => placeholderNames('SELECT `{{a}}`', 'mysql'))).toContain('inside quotes');
  });

  it('follows each dialect’s string escapes', () => {
    // PostgreSQL standard strings keep backslashes: the quote after \ closes the string.
    expect(placeholderNames("SELECT 'a\\' || {{x}}", 'postgres')).toEqual(['x']);
    // In E'' strings and in MySQL, \' is an escaped quote: the placeholder is still quoted.
    expect(invalid(() => placeholderNames("SELECT E'a\\' || {{x}}'", 'postgres'))).toContain('inside quotes');
    expect(invalid(() => placeholderNames("SELECT 'a\\' || {{x}}'", 'mysql'))).toContain('inside quotes');
    expect(placeholderNames("SELECT 'it''s' || {{x}}", 'postgres')).toEqual(['x']);
  });

  it('treats MySQL executable comments and hints as code', () => {
    expect(invalid(() => placeholderNames('SELECT /*! ? */ 1', 'mysql'))).toContain('?');
    expect(placeholderNames('SELECT /*+ MAX_EXECUTION_TIME(10) */ {{a}}', 'mysql')).toEqual(['a']);
  });

  it('rejects raw driver markers and malformed placeholders', () => {
    expect(invalid(() => placeholderNames('SELECT $1', 'postgres'))).toContain('positional');
    expect(invalid(() => placeholderNames('SELECT ?', 'mysql'))).toContain('?');
    expect(invalid(() => placeholderNames('SELECT {{runtime.secrets.X}}', 'postgres'))).toContain(
      'not a valid placeholder',
    );
    // ? is a jsonb operator in PostgreSQL and $ may end an identifier.
    expect(placeholderNames("SELECT '{}'::jsonb ? 'k', a$1 FROM t", 'postgres')).toEqual([]);
  });

  it('says which parameter is missing', () => {
    expect(invalid(() => compileStatement('SELECT {{a}}', {}, 'postgres'))).toContain(
      'parameter a has no value',
    );
  });
});

describe('leadingKeyword', () => {
  it('skips comments and whitespace', () => {
    expect(leadingKeyword('  -- c\n/* x */ insert into t')).toBe('INSERT');
    expect(leadingKeyword('(SELECT 1)')).toBeNull();
  });
});

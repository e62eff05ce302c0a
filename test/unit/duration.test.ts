import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration, parseInstant } from '@timelane/client';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['2s', 2_000],
    ['1m', 60_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    ['1.5s', 1_500],
    ['.5s', 500],
    ['0', 0],
    ['0ms', 0],
    ['1h30m', 5_400_000],
    ['1m 30s', 90_000],
    ['2S', 2_000],
    [' 250ms ', 250],
    ['1.4ms', 1],
    ['1.5ms', 2],
  ])('%s → %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '5', '1.5', 'ms', '-1s', '1x', '1s2', '1 s x', 's1', '1e3ms', 'abc'])('rejects %j', (text) => {
    expect(() => parseDuration(text)).toThrow(RangeError);
  });

  it('says a bare number lacks a unit', () => {
    expect(() => parseDuration('5')).toThrow(/missing unit/);
  });
});

describe('parseInstant', () => {
  it('reads UTC and offset forms', () => {
    expect(parseInstant('2030-01-01T10:00:00.000Z')).toBe(Date.UTC(2030, 0, 1, 10));
    expect(parseInstant('2030-01-01T10:00:00.250Z')).toBe(Date.UTC(2030, 0, 1, 10, 0, 0, 250));
    expect(parseInstant('2030-01-01T10:00:00+02:00')).toBe(Date.UTC(2030, 0, 1, 8));
    expect(parseInstant('2030-01-01t10:00:00z')).toBe(Date.UTC(2030, 0, 1, 10));
    expect(parseInstant('2030-01-01')).toBe(Date.UTC(2030, 0, 1));
  });

  it('reads a date-time without offset as local time', () => {
    expect(parseInstant('2030-01-01T10:00:00')).toBe(new Date(2030, 0, 1, 10).getTime());
  });

  it.each(['tomorrow', '2030-02-30T10:00:00Z', '2030-13-01T00:00:00Z', '1700000000000', '2030-01-01T25:00:00Z'])(
    'rejects %j',
    (text) => {
      expect(() => parseInstant(text)).toThrow(RangeError);
    },
  );
});

describe('formatDuration', () => {
  it.each([
    [0, '0ms'],
    [12.34, '12.3ms'],
    [950, '950ms'],
    [1_500, '1.5s'],
    [90_000, '1m30s'],
    [3_600_000, '1h'],
    [90_061_500, '1d1h1m1.5s'],
    [-250, '-250ms'],
  ])('%d → %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

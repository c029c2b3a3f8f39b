import { ConfigError, loadConfig } from '../src/index.js';

describe('WEFT_BUS_MAX_MESSAGE_BYTES', () => {
  it('bounds bus messages at 64 MiB unless set', () => {
    expect(loadConfig({}).busMaxMessageBytes).toBe(64 * 1024 * 1024);
    expect(loadConfig({ WEFT_BUS_MAX_MESSAGE_BYTES: '1048576' }).busMaxMessageBytes).toBe(1048576);
  });

  it('refuses a value that is not a whole number of bytes from 64 KiB to 1 GiB', () => {
    for (const value of ['1000', '2e30', 'lots', '-5']) {
      expect(() => loadConfig({ WEFT_BUS_MAX_MESSAGE_BYTES: value })).toThrow(ConfigError);
    }
  });
});

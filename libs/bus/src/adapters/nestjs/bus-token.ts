/** Injection token of the Bus: `constructor(@Inject(BUS) private readonly bus: Bus)`. */
export const BUS = Symbol.for('weft.bus');

package retry

import "time"

// The spec keys of every policy, for Parse and String. Each params method binds keys to the
// fields of the value it is called on.

func durP(key string, d *time.Duration, hint string) param {
	return param{key: key, dur: d, hint: hint}
}

func noneDurP(key string, d *time.Duration, hint string) param {
	return param{key: key, dur: d, none: true, hint: hint}
}

func multP(key string, f *float64, hint string) param {
	return param{key: key, num: f, hint: hint}
}

func countP(key string, n *int, min float64, hint string) param {
	return param{key: key, cnt: n, min: min, hint: hint}
}

func (p *GCS) params() []param {
	return []param{
		durP("initial", &p.Initial, "1s"),
		multP("multiplier", &p.Multiplier, "2"),
		durP("max", &p.Max, "32s or 64s"),
		noneDurP("jitter", &p.Jitter, "1s, or 0 for none"),
		countP("retries", &p.MaxRetries, 0, "0 for no limit, or 10"),
	}
}

func (p *GCS) done() Policy { return p.resolved() }

// String returns p's spec with every default filled in, e.g. "gcs:initial=1s,…".
func (p GCS) String() string { p = p.resolved(); return spec("gcs", p.params()) }

func (p *Java) params() []param {
	return []param{
		durP("initial", &p.Initial, "500ms"),
		multP("multiplier", &p.Multiplier, "1.5"),
		{key: "randomization", num: &p.Randomization, none: true, most: 1, hint: "0.5, at most 1, or 0 for none"},
		durP("max", &p.MaxInterval, "60s"),
		noneDurP("elapsed", &p.MaxElapsed, "15m, or 0 for no time limit"),
	}
}

func (p *Java) done() Policy { return p.resolved() }

// String returns p's spec with every default filled in.
func (p Java) String() string { p = p.resolved(); return spec("java", p.params()) }

func (p *Drive) params() []param {
	return []param{
		durP("initial", &p.Initial, "1s"),
		multP("multiplier", &p.Multiplier, "2"),
		noneDurP("jitter", &p.Jitter, "1s, or 0 for none"),
		countP("retries", &p.MaxRetries, 1, "5"),
	}
}

func (p *Drive) done() Policy { return p.resolved() }

// String returns p's spec with every default filled in.
func (p Drive) String() string { p = p.resolved(); return spec("drive", p.params()) }

func (p *SimpleDB) params() []param {
	return []param{
		durP("base", &p.Base, "100ms"),
		multP("multiplier", &p.Multiplier, "4"),
		{key: "cap", dur: &p.Cap, none: true, hint: "2m, or 0 for none"},
		countP("retries", &p.MaxRetries, 0, "0 for no limit, or 10"),
	}
}

func (p *SimpleDB) done() Policy { return p.resolved() }

// String returns p's spec with every default filled in.
func (p SimpleDB) String() string { p = p.resolved(); return spec("simpledb", p.params()) }

func (p *CSMA) params() []param {
	return []param{
		durP("slot", &p.Slot, "100ms"),
		{key: "limit", cnt: &p.Limit, min: 1, most: 62, hint: "10"},
		countP("attempts", &p.Attempts, 1, "16"),
	}
}

func (p *CSMA) done() Policy { return p.resolved() }

// String returns p's spec with every default filled in.
func (p CSMA) String() string { p = p.resolved(); return spec("csma", p.params()) }

func expoParams(p *Exponential) []param {
	return []param{
		durP("base", &p.Base, "100ms"),
		multP("multiplier", &p.Multiplier, "2"),
		durP("cap", &p.Cap, "20s"),
		countP("retries", &p.MaxRetries, 0, "0 for no limit, or 10"),
	}
}

func (p *Exponential) params() []param { return expoParams(p) }
func (p *Exponential) done() Policy    { return p.resolved() }

// String returns p's spec with every default filled in.
func (p Exponential) String() string { p = p.resolved(); return spec("exponential", p.params()) }

func (p *FullJitter) params() []param { return expoParams((*Exponential)(p)) }
func (p *FullJitter) done() Policy    { return FullJitter(Exponential(*p).resolved()) }

// String returns p's spec with every default filled in.
func (p FullJitter) String() string {
	e := Exponential(p).resolved()
	return spec("full", e.params())
}

func (p *EqualJitter) params() []param { return expoParams((*Exponential)(p)) }
func (p *EqualJitter) done() Policy    { return EqualJitter(Exponential(*p).resolved()) }

// String returns p's spec with every default filled in.
func (p EqualJitter) String() string {
	e := Exponential(p).resolved()
	return spec("equal", e.params())
}

func (p *Decorrelated) params() []param {
	return []param{
		durP("base", &p.Base, "100ms"),
		durP("cap", &p.Cap, "20s"),
		countP("retries", &p.MaxRetries, 0, "0 for no limit, or 10"),
	}
}

func (p *Decorrelated) done() Policy { return p.resolved() }

// String returns p's spec with every default filled in.
func (p Decorrelated) String() string { p = p.resolved(); return spec("decorrelated", p.params()) }

func (p *Constant) params() []param {
	return []param{
		noneDurP("wait", &p.Delay, "1s, or 0 to retry at once"),
		countP("retries", &p.MaxRetries, 0, "0 for no limit, or 10"),
	}
}

func (p *Constant) done() Policy { return p.resolved() }

// String returns p's spec with every default filled in.
func (p Constant) String() string { p = p.resolved(); return spec("constant", p.params()) }

package auth

// LeasedStore is a Store whose refresh leases come from elsewhere: a
// store shared by several token sources without leases of its own (a file
// store, a memory store) joined with something that leases keys (a state
// backend's Lease, such as state.Local's for token sources in one process,
// or several gateways in one test). Its methods are those of its two
// parts, and as safe for concurrent use as they are.
type LeasedStore struct {
	Store  // REQUIRED
	Leaser // REQUIRED
}

var (
	_ Store  = LeasedStore{}
	_ Leaser = LeasedStore{}
)

//go:build !unix

package main

// freePagesLazily is a no-op where processes cannot be re-executed in
// place.
func freePagesLazily() {}

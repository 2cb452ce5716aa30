package main

import "sync"

// collector is an Output that keeps every record.
type collector[T any] struct {
	mu  sync.Mutex
	out []T
}

func (c *collector[T]) Write(b []T) error {
	c.mu.Lock()
	c.out = append(c.out, b...)
	c.mu.Unlock()
	return nil
}

func (c *collector[T]) Close() error { return nil }

package dataflow

// Len is the number of records in the batch.
func (b *Kbatch[K, T]) Len() int { return len(b.Recs) }

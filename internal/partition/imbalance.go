package partition

// Imbalance accumulates the imbalance of loads over epochs: the sum over
// epochs of the largest load divided by the sum of the mean loads, so an
// epoch weighs by its records. It is 1 for perfect balance (and when
// nothing was added).
type Imbalance struct {
	sumMax, sumMean float64
	epochs          int
}

// Add adds one epoch's loads (one per task).
func (b *Imbalance) Add(loads []int64) {
	if len(loads) == 0 {
		return
	}
	var sum, mx int64
	for _, l := range loads {
		sum += l
		mx = max(mx, l)
	}
	if sum == 0 {
		return
	}
	b.sumMax += float64(mx)
	b.sumMean += float64(sum) / float64(len(loads))
	b.epochs++
}

// Value is the accumulated imbalance, at least 1.
func (b *Imbalance) Value() float64 {
	if b.sumMean == 0 {
		return 1
	}
	return max(1, b.sumMax/b.sumMean)
}

// Epochs is the number of epochs with a non-zero load.
func (b *Imbalance) Epochs() int { return b.epochs }

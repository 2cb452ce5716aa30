package partition

// minHeap is a binary min-heap of task indices (blocks or reducers)
// ordered by load, ties by index, so that plans are deterministic. The
// loads live outside the heap: a task's load may change only while the
// task is out of the heap.
type minHeap struct {
	items []int32
	load  []int64
}

func (h *minHeap) less(a, b int32) bool {
	la, lb := h.load[a], h.load[b]
	return la < lb || la == lb && a < b
}

// init fills the heap with tasks 0..n-1.
func (h *minHeap) init(n int, load []int64) {
	h.load = load
	h.items = h.items[:0]
	for i := range n {
		h.items = append(h.items, int32(i))
	}
	for i := n/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *minHeap) len() int { return len(h.items) }

// top is the least loaded task; the heap must not be empty.
func (h *minHeap) top() int32 { return h.items[0] }

// fixTop restores the order after the top's load went up.
func (h *minHeap) fixTop() { h.down(0) }

func (h *minHeap) pop() int32 {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	if last > 0 {
		h.down(0)
	}
	return top
}

func (h *minHeap) push(t int32) {
	h.items = append(h.items, t)
	i := len(h.items) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(h.items[i], h.items[parent]) {
			break
		}
		h.items[i], h.items[parent] = h.items[parent], h.items[i]
		i = parent
	}
}

func (h *minHeap) down(i int) {
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.less(h.items[r], h.items[l]) {
			m = r
		}
		if !h.less(h.items[m], h.items[i]) {
			return
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}

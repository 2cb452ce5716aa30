package transport

import "fmt"

// RecvFirst returns the first payload that any of the processes from
// sends on channel ch, and which process sent it: for a message one of
// several peers answers, the one whose turn it is (a process that joins
// an elastic job hears its admission from whichever process admits
// joins then). The payload is a copy, and the Receiver it came through
// released. The receivers of the others go on waiting, each for one
// payload it drops, until the network stops; ch must carry nothing else
// to this process from them. An error comes only once every receiver
// has failed (the first is returned).
func RecvFirst(nw Network, ch uint32, from []int) ([]byte, int, error) {
	if len(from) == 0 {
		return nil, -1, fmt.Errorf("transport: nothing to receive channel %#x from", ch)
	}
	type got struct {
		b    []byte
		from int
		err  error
	}
	c := make(chan got, len(from)) // none blocks once the first is taken
	for _, p := range from {
		r := nw.Receiver(ch, p)
		go func() {
			b, err := r.Recv()
			if err == nil {
				b = append([]byte(nil), b...)
				r.Release()
			}
			c <- got{b, p, err}
		}()
	}
	var first error
	for range from {
		g := <-c
		if g.err == nil {
			return g.b, g.from, nil
		}
		if first == nil {
			first = fmt.Errorf("from process %d: %w", g.from, g.err)
		}
	}
	return nil, -1, first
}

package transport_test

import (
	"fmt"
	"io"

	"github.com/weirstream/weir/internal/transport"
)

// Two in-process "processes": process 0 sends three payloads on channel 7
// to process 1, then closes; process 1 reads them and then io.EOF.
func ExampleNewLocal() {
	nets := transport.NewLocal(2)
	s := nets[0].Sender(7, 1)
	for _, word := range []string{"one", "two", "three"} {
		if err := s.Send(append(s.Buffer(), word...)); err != nil {
			fmt.Println(err)
		}
	}
	nets[0].Close()

	r := nets[1].Receiver(7, 0)
	for {
		p, err := r.Recv()
		if err == io.EOF {
			break
		}
		fmt.Println(string(p))
		r.Release()
	}
	nets[1].Close()
	// Output:
	// one
	// two
	// three
}

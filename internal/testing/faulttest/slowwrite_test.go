//go:build faults

package faulttest

import (
	pgwire "encoding/binary"
	"sync"
	"time"

	"github.com/Shopify/toxiproxy/v2/toxics"
)

// slowWrite is the slow holder's toxic: toxiproxy's latency, plus a signal
// when a pipelined batch of writes passes, so that the nemesis can pause
// the holder just after its write went into the delay (before it, the
// write would not be sent; long after it, the holder would have noticed
// that its renewals do not come back).
type slowWrite struct {
	Latency int64 `json:"latency"` // milliseconds
	Watch   int64 `json:"watch"`   // the key of the channel in watches to signal
}

// watches are the nemesis's channels, by slowWrite.Watch: each is told
// what the delay caught.
var watches sync.Map // int64 → chan string

func init() { toxics.Register("slow_write", new(slowWrite)) }

func (t *slowWrite) GetBufferSize() int { return 1024 }

func (t *slowWrite) Pipe(stub *toxics.ToxicStub) {
	delay := time.Duration(t.Latency) * time.Millisecond
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			if binds, parses := batch(c.Data); binds >= 3 || parses >= 3 {
				if ch, ok := watches.Load(t.Watch); ok {
					select {
					case ch.(chan string) <- map[bool]string{true: "a write held", false: "a write's prepare held"}[binds >= 3]:
					default:
					}
				}
			}
			select {
			case <-time.After(delay - time.Since(c.Timestamp)):
				stub.Output <- c
			case <-stub.Interrupt:
				stub.Output <- c // never drop data
				return
			}
		}
	}
}

// batch counts the Bind and Parse messages of PostgreSQL's protocol at the
// start of chunk. A pipelined batch (lease.SendFenced: the fence, the
// source's row, its results) binds several statements in one send, where
// a renewal or a statement of a transaction binds one. On a connection
// that has not yet prepared them, the batch is preceded by one send that
// parses them all; the batch itself follows that send's answer.
func batch(chunk []byte) (binds, parses int) {
	for len(chunk) >= 5 {
		switch chunk[0] {
		case 'B':
			binds++
		case 'P':
			parses++
		case 'E', 'D', 'S', 'C', 'H', 'Q', 'F', 'X':
		default:
			return binds, parses // not at a message's start
		}
		size := int(pgwire.BigEndian.Uint32(chunk[1:5]))
		if size < 4 || size+1 > len(chunk) {
			return binds, parses
		}
		chunk = chunk[1+size:]
	}
	return binds, parses
}

package transport

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"
)

// write sends queued frames, batched into one write, and heartbeats when
// nothing else was sent for a Heartbeat. It returns after the close frame.
func (p *peer) write() {
	defer p.n.wg.Done()
	defer close(p.writerDone)
	tick := time.NewTicker(p.n.cfg.Heartbeat)
	defer tick.Stop()
	wrote := false
	for {
		beat := false
		select {
		case <-p.wake:
		case <-tick.C:
			beat, wrote = !wrote, false
		case <-p.n.kill:
			return
		}
		p.wmu.Lock()
		p.batch, p.q = p.q, p.batch[:0]
		p.wmu.Unlock()
		if beat && len(p.batch) == 0 && !p.remoteClosed.Load() {
			p.batch = append(p.batch, outFrame{kind: KindHeartbeat})
		}
		if len(p.batch) == 0 {
			continue
		}
		last := p.batch[len(p.batch)-1].kind == KindClose
		err := p.flush()
		clear(p.batch)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				err = fmt.Errorf("write stalled for %v", p.n.cfg.Timeout)
			} else {
				err = fmt.Errorf("connection lost: %w", err)
			}
			p.lost(err)
			return
		}
		wrote = true
		if last {
			if cw, ok := p.conn.(interface{ CloseWrite() error }); ok {
				cw.CloseWrite()
			}
			return
		}
	}
}

// flush writes p.batch: headers and small payloads copied into one
// buffer, large payloads written from where they are (writev). A large
// batch goes out in writes of about maxWrite bytes, which bounds the
// buffer.
func (p *peer) flush() error {
	defer func() {
		for _, f := range p.batch {
			if f.payload != nil {
				putBuf(f.payload)
			}
		}
	}()
	self := uint16(p.n.self)
	p.buf, p.iov = p.buf[:0], p.iov[:0]
	start, size := 0, 0 // start of the buffer's unsealed part; bytes in p.iov
	for _, f := range p.batch {
		h := Header{Kind: f.kind, Channel: f.ch, Source: self, Target: uint16(p.idx), Seq: f.seq}
		switch f.kind {
		case KindData:
			h.Length = uint32(len(f.payload))
			p.buf = AppendHeader(p.buf, h)
			if len(f.payload) <= copyMax {
				p.buf = append(p.buf, f.payload...)
			} else {
				p.iov = append(p.iov, p.buf[start:], f.payload)
				size += len(p.buf) - start + len(f.payload)
				start = len(p.buf)
			}
		case KindCredit:
			h.Length = creditSize
			p.buf = binary.BigEndian.AppendUint32(AppendHeader(p.buf, h), f.credits)
		case KindClose:
			h.Length = uint32(len(f.reason))
			p.buf = append(AppendHeader(p.buf, h), f.reason...)
		case KindMember:
			h.Length = noteSize
			p.buf = appendNote(AppendHeader(p.buf, h), f.note)
		default:
			p.buf = AppendHeader(p.buf, h)
		}
		if size+len(p.buf)-start >= maxWrite {
			if err := p.writeOut(start); err != nil {
				return err
			}
			p.buf, p.iov = p.buf[:0], p.iov[:0]
			start, size = 0, 0
		}
	}
	return p.writeOut(start)
}

// writeOut writes p.iov and the unsealed rest of p.buf from start.
func (p *peer) writeOut(start int) error {
	if start < len(p.buf) {
		p.iov = append(p.iov, p.buf[start:])
	}
	if len(p.iov) == 0 {
		return nil
	}
	p.conn.SetWriteDeadline(time.Now().Add(p.n.cfg.Timeout))
	p.bufs = p.iov
	if p.co == nil {
		_, err := p.bufs.WriteTo(p.conn)
		return err
	}
	p.co.gather()
	_, err := p.bufs.WriteTo(p.conn)
	if ferr := p.co.flush(); err == nil {
		err = ferr
	}
	return err
}

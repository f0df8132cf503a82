package queue

import (
	"errors"
	"fmt"
)

// ErrClosed is returned by operations on a closed Queue.
var ErrClosed = errors.New("queue: closed")

// ErrFinished is returned when a Delivery that was already acked, naked or
// terminated is acked, naked or terminated again.
var ErrFinished = errors.New("queue: delivery already finished")

// ErrInvalidSlice is wrapped by Publish when a slice cannot be published
// (missing or unusable run or slice id).
var ErrInvalidSlice = errors.New("queue: invalid slice")

// BadMessageError is returned by Next for a message that is not a usable
// slice. Next has already terminated it (it is never redelivered); the caller
// logs or counts it and calls Next again.
type BadMessageError struct {
	// StreamSeq is the message's sequence in the stream.
	StreamSeq uint64
	// Subject the message was published on.
	Subject string
	// Err says what is wrong with it.
	Err error
}

func (e *BadMessageError) Error() string {
	return fmt.Sprintf("queue: bad message %d on %s (terminated): %v", e.StreamSeq, e.Subject, e.Err)
}

func (e *BadMessageError) Unwrap() error { return e.Err }

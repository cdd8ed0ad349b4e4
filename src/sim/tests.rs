//! Tests of the simulator.

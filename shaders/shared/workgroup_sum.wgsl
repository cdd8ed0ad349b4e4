// The wrapping sum of one u32 from every invocation of the workgroup.
//
// A barrier-separated tree in workgroup memory; WORKGROUP_SIZE must be a power of two.
var<workgroup> partial: array<u32, WORKGROUP_SIZE>;

// Call from uniform control flow: every step ends in a barrier. Only invocation 0's
// result is the sum.
fn workgroup_sum(lid: u32, value: u32) -> u32 {
    partial[lid] = value;
    workgroupBarrier();
    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
        if lid < stride {
            partial[lid] += partial[lid + stride];
        }
        workgroupBarrier();
    }
    return partial[0];
}

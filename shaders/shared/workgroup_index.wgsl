// The linear index of this workgroup.
//
// A grid wider than 65535 workgroups is dispatched as rows of nwg.x workgroups.
fn workgroup_index(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return wid.y * nwg.x + wid.x;
}

// p44: is the NVIDIA driver's vkCmdCopyBuffer slow by itself, or only under wgpu?
//
// membench issue 53, item 4 (docs/transfers.md, "wgpu's device copy against CUDA's"):
// wgpu's transfer/device_copy, one vkCmdCopyBuffer on wgpu-hal's single universal queue,
// reads 845 GB/s on an H100 at 256 MiB, against 2969 for cuMemcpyDtoDAsync. This probe
// records the same copy straight against Vulkan, on every queue family that can copy,
// with one or 16 regions, with and without a barrier between copies. If the universal
// queue here also reads near 845, the driver is slow by itself; if it reads near CUDA,
// wgpu adds the cost.
//
// Usage: p44 [copies] [max_mib]   (defaults 20 and 1024; sizes 16, 64, 256, 1024 MiB up
// to max_mib). Prints '#' lines about the device, then CSV. Exits 1 if a copy is wrong.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vulkan/vulkan.h>

#define CK(x)                                                             \
    do {                                                                  \
        VkResult r_ = (x);                                                \
        if (r_ != VK_SUCCESS) {                                           \
            fprintf(stderr, "p44: %s failed: VkResult %d\n", #x, r_);     \
            exit(2);                                                      \
        }                                                                 \
    } while (0)

#define MIB (1024ull * 1024)
#define PATTERN 0x3f800001u // not zero and not one repeated byte: a stray memset cannot fake it
#define SAMPLE 256          // words checked at the head of each region and at the tail
#define MAX_REGIONS 16
#define REPS 3 // timed runs per line after one warm-up, their median reported: few, as copy engines may be slow

typedef struct {
    VkBuffer buf;
    VkDeviceMemory mem;
} Buf;

typedef struct {
    const char *name;
    uint32_t family;
    uint32_t valid_bits; // 0: the family has no timestamps, so the host clock times it
    VkQueue queue;
    VkCommandPool pool;
    VkCommandBuffer cb;
} Queue;

static VkDevice dev;
static VkPhysicalDeviceMemoryProperties memprops;
static Queue queues[3]; // universal, compute-only, transfer-only; family UINT32_MAX: absent
static VkQueryPool timestamps;
static float period_ns;
static Buf src, dst, readback;
static VkDeviceSize buf_size;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

// Buffers are shared CONCURRENT between the families so that no ownership transfer enters
// the timed command buffer; buffers have no layouts, so sharing mode should not change a copy.
static Buf make_buffer(VkDeviceSize size, VkBufferUsageFlags usage, VkMemoryPropertyFlags want,
                       uint32_t nfam, const uint32_t *fams) {
    VkBufferCreateInfo bi = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = size,
        .usage = usage,
        .sharingMode = nfam > 1 ? VK_SHARING_MODE_CONCURRENT : VK_SHARING_MODE_EXCLUSIVE,
        .queueFamilyIndexCount = nfam > 1 ? nfam : 0,
        .pQueueFamilyIndices = fams,
    };
    Buf b;
    CK(vkCreateBuffer(dev, &bi, NULL, &b.buf));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, b.buf, &req);
    uint32_t type = UINT32_MAX;
    for (uint32_t i = 0; i < memprops.memoryTypeCount && type == UINT32_MAX; i++)
        if ((req.memoryTypeBits & (1u << i)) && (memprops.memoryTypes[i].propertyFlags & want) == want)
            type = i;
    if (type == UINT32_MAX) {
        fprintf(stderr, "p44: no memory type with properties 0x%x for a buffer\n", want);
        exit(2);
    }
    VkMemoryAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex = type,
    };
    if (vkAllocateMemory(dev, &ai, NULL, &b.mem) != VK_SUCCESS) {
        fprintf(stderr, "p44: cannot allocate %llu bytes (give a smaller max_mib)\n",
                (unsigned long long)req.size);
        exit(2);
    }
    CK(vkBindBufferMemory(dev, b.buf, b.mem, 0));
    return b;
}

static void begin(Queue *q) {
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    CK(vkResetCommandBuffer(q->cb, 0));
    CK(vkBeginCommandBuffer(q->cb, &bi));
}

// Returns the host seconds of submit + wait: the clock of the families without timestamps.
static double submit(Queue *q) {
    CK(vkEndCommandBuffer(q->cb));
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &q->cb};
    double t0 = now_s();
    CK(vkQueueSubmit(q->queue, 1, &si, VK_NULL_HANDLE));
    CK(vkQueueWaitIdle(q->queue));
    return now_s() - t0;
}

static void barrier(VkCommandBuffer cb, VkAccessFlags from, VkPipelineStageFlags to_stage, VkAccessFlags to) {
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = from, .dstAccessMask = to};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, to_stage, 0, 1, &mb, 0, NULL, 0, NULL);
}

// Region i covers [i*chunk, (i+1)*chunk), the last one up to size: the same bytes as one region.
static uint32_t split(VkDeviceSize size, uint32_t regions, VkBufferCopy *rg) {
    VkDeviceSize chunk = size / regions;
    for (uint32_t i = 0; i < regions; i++) {
        rg[i].srcOffset = rg[i].dstOffset = i * chunk;
        rg[i].size = i + 1 < regions ? chunk : size - i * chunk;
    }
    return regions;
}

// One timed run: seconds for `copies` whole-range copies src -> dst on queue q.
static double run(Queue *q, VkDeviceSize size, uint32_t regions, int barriers, int copies) {
    // Zeroing dst first lets the check see what this run wrote. The universal queue does it
    // (and resets the query pool) because transfer-only queues may not reset query pools.
    Queue *u = &queues[0];
    begin(u);
    vkCmdFillBuffer(u->cb, dst.buf, 0, VK_WHOLE_SIZE, 0);
    vkCmdResetQueryPool(u->cb, timestamps, 0, 2);
    submit(u);

    VkBufferCopy rg[MAX_REGIONS];
    split(size, regions, rg);
    begin(q);
    if (q->valid_bits)
        vkCmdWriteTimestamp(q->cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, timestamps, 0);
    for (int k = 0; k < copies; k++) {
        // Back-to-back copies into one buffer are write-after-write; without a barrier the
        // driver may overlap them, with one it must drain each before the next. wgpu records
        // the barrier: its tracker skips one only for read-only usages, and COPY_DST is not.
        if (barriers && k)
            barrier(q->cb, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                    VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
        vkCmdCopyBuffer(q->cb, src.buf, dst.buf, regions, rg);
    }
    if (q->valid_bits)
        vkCmdWriteTimestamp(q->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timestamps, 1);
    double host = submit(q);
    if (!q->valid_bits)
        return host;
    uint64_t ts[2];
    CK(vkGetQueryPoolResults(dev, timestamps, 0, 2, sizeof ts, ts, sizeof ts[0],
                             VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
    uint64_t mask = q->valid_bits >= 64 ? ~0ull : (1ull << q->valid_bits) - 1;
    return (double)((ts[1] - ts[0]) & mask) * period_ns * 1e-9;
}

// Checks the head of every region, the tail of the range, and the word past it: a dropped or
// shifted region leaves zeros, an overrun leaves the pattern beyond size.
static int verify(VkDeviceSize size, uint32_t regions) {
    VkBufferCopy rg[MAX_REGIONS + 2];
    uint32_t n = split(size, regions, rg);
    for (uint32_t i = 0; i < n; i++) {
        rg[i].srcOffset = rg[i].dstOffset;
        rg[i].dstOffset = i * SAMPLE * 4;
        rg[i].size = SAMPLE * 4;
    }
    rg[n] = (VkBufferCopy){size - SAMPLE * 4, (VkDeviceSize)n * SAMPLE * 4, SAMPLE * 4};
    n++;
    int guard = size < buf_size;
    if (guard) {
        rg[n] = (VkBufferCopy){size, (VkDeviceSize)n * SAMPLE * 4, 4};
        n++;
    }
    Queue *u = &queues[0];
    begin(u);
    barrier(u->cb, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
    vkCmdCopyBuffer(u->cb, dst.buf, readback.buf, n, rg);
    barrier(u->cb, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    submit(u);
    uint32_t *w;
    CK(vkMapMemory(dev, readback.mem, 0, VK_WHOLE_SIZE, 0, (void **)&w));
    uint32_t words = (n - guard) * SAMPLE, bad = 0;
    for (uint32_t i = 0; i < words; i++)
        bad += w[i] != PATTERN;
    if (guard && w[words] != 0) {
        fprintf(stderr, "p44: the word past %llu bytes was written: 0x%08x\n", (unsigned long long)size, w[words]);
        bad++;
    }
    vkUnmapMemory(dev, readback.mem);
    if (bad)
        fprintf(stderr, "p44: %u of %u checked words wrong at size %llu, %u regions\n", bad,
                words + guard, (unsigned long long)size, regions);
    return bad == 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void flags_text(VkQueueFlags f, char *out) {
    out[0] = 0;
    const char *names[] = {"graphics", "compute", "transfer", "sparse"};
    for (int i = 0; i < 4; i++)
        if (f & (1u << i))
            strcat(strcat(out, out[0] ? "|" : ""), names[i]);
    if (f & ~0xfu)
        sprintf(out + strlen(out), "%s0x%x", out[0] ? "|" : "", f & ~0xfu);
}

static long arg(int argc, char **argv, int i, long def, long min, const char *what) {
    if (argc <= i)
        return def;
    char *end;
    long v = strtol(argv[i], &end, 10);
    if (*end || v < min) {
        fprintf(stderr, "p44: %s must be an integer >= %ld, got '%s' (usage: p44 [copies] [max_mib])\n", what, min, argv[i]);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv) {
    double t_start = now_s();
    int copies = (int)arg(argc, argv, 1, 20, 1, "copies");
    long max_mib = arg(argc, argv, 2, 1024, 16, "max_mib");
    const VkDeviceSize sizes[] = {16 * MIB, 64 * MIB, 256 * MIB, 1024 * MIB};

    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "p44", .apiVersion = VK_API_VERSION_1_2};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkInstance inst;
    CK(vkCreateInstance(&ici, NULL, &inst));
    uint32_t ndev = 1;
    VkPhysicalDevice phys;
    VkResult r = vkEnumeratePhysicalDevices(inst, &ndev, &phys);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || ndev == 0) {
        fprintf(stderr, "p44: no Vulkan physical device (VkResult %d; is VK_DRIVER_FILES set?)\n", r);
        return 2;
    }
    VkPhysicalDeviceDriverProperties drv = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &drv};
    vkGetPhysicalDeviceProperties2(phys, &props);
    VkPhysicalDeviceProperties *p = &props.properties;
    period_ns = p->limits.timestampPeriod;
    printf("# device: %s, vendor 0x%04x, driver %s %s (driverVersion 0x%08x), api %u.%u.%u, timestampPeriod %g ns\n",
           p->deviceName, p->vendorID, drv.driverName, drv.driverInfo, p->driverVersion,
           VK_API_VERSION_MAJOR(p->apiVersion), VK_API_VERSION_MINOR(p->apiVersion),
           VK_API_VERSION_PATCH(p->apiVersion), period_ns);
    vkGetPhysicalDeviceMemoryProperties(phys, &memprops);

    // The first family of each kind is its variant, and gets one queue. Only those: a video or
    // optical-flow family that also copies might want its extension enabled to open.
    uint32_t nfam = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &nfam, NULL);
    VkQueueFamilyProperties *fam = calloc(nfam, sizeof *fam);
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &nfam, fam);
    const char *kind_names[3] = {"universal", "compute", "transfer"};
    for (int k = 0; k < 3; k++)
        queues[k] = (Queue){.name = kind_names[k], .family = UINT32_MAX};
    const VkQueueFlags G = VK_QUEUE_GRAPHICS_BIT, C = VK_QUEUE_COMPUTE_BIT, T = VK_QUEUE_TRANSFER_BIT;
    const VkQueueFlags plain = G | C | T | VK_QUEUE_SPARSE_BINDING_BIT | VK_QUEUE_PROTECTED_BIT;
    VkDeviceQueueCreateInfo qci[3];
    uint32_t used[3], nused = 0;
    float prio = 1.0f;
    for (uint32_t i = 0; i < nfam; i++) {
        VkQueueFlags f = fam[i].queueFlags;
        if (!(f & (C | T)))
            continue;
        char text[96];
        flags_text(f, text);
        printf("# queue family %u: %s, %u queues, timestampValidBits %u\n", i, text, fam[i].queueCount,
               fam[i].timestampValidBits);
        int k = (f & G) && (f & C) ? 0 : (f & C) && !(f & G) ? 1 : !(f & (G | C)) && !(f & ~plain) ? 2 : -1;
        if (k < 0 || queues[k].family != UINT32_MAX)
            continue;
        queues[k].family = i;
        queues[k].valid_bits = fam[i].timestampValidBits;
        qci[nused] = (VkDeviceQueueCreateInfo){.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                               .queueFamilyIndex = i, .queueCount = 1, .pQueuePriorities = &prio};
        used[nused++] = i;
    }
    if (queues[0].family == UINT32_MAX) {
        fprintf(stderr, "p44: no graphics+compute queue family (wgpu's queue) on this device\n");
        return 2;
    }
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = nused, .pQueueCreateInfos = qci};
    CK(vkCreateDevice(phys, &dci, NULL, &dev));
    for (int k = 0; k < 3; k++) {
        Queue *q = &queues[k];
        if (q->family == UINT32_MAX)
            continue;
        vkGetDeviceQueue(dev, q->family, 0, &q->queue);
        VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                       .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, .queueFamilyIndex = q->family};
        CK(vkCreateCommandPool(dev, &pci, NULL, &q->pool));
        VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = q->pool,
                                           .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
        CK(vkAllocateCommandBuffers(dev, &cai, &q->cb));
    }
    VkQueryPoolCreateInfo qpi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 2};
    CK(vkCreateQueryPool(dev, &qpi, NULL, &timestamps));

    // One pair of buffers at the largest size; smaller sizes copy its first bytes.
    for (int s = 0; s < 4; s++)
        if (sizes[s] <= (VkDeviceSize)max_mib * MIB)
            buf_size = sizes[s];
    VkBufferUsageFlags usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    src = make_buffer(buf_size, usage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, nused, used);
    dst = make_buffer(buf_size, usage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, nused, used);
    readback = make_buffer((MAX_REGIONS + 2) * SAMPLE * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                           VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 1, used);
    begin(&queues[0]);
    vkCmdFillBuffer(queues[0].cb, src.buf, 0, VK_WHOLE_SIZE, PATTERN);
    submit(&queues[0]);

    printf("probe,variant,queue_family,size,regions,gbps\n");
    int failed = 0;
    for (int s = 0; s < 4 && sizes[s] <= buf_size; s++)
        for (int k = 0; k < 3; k++) {
            Queue *q = &queues[k];
            if (q->family == UINT32_MAX)
                continue;
            for (uint32_t regions = 1; regions <= MAX_REGIONS; regions += MAX_REGIONS - 1)
                for (int barriers = 0; barriers < 2; barriers++) {
                    double t[REPS];
                    run(q, sizes[s], regions, barriers, copies); // warm-up: first-use costs stay out
                    for (int i = 0; i < REPS; i++)
                        t[i] = run(q, sizes[s], regions, barriers, copies);
                    if (!verify(sizes[s], regions)) {
                        printf("FAILED: %s queue family %u, size %llu, %u regions%s\n", q->name, q->family,
                               (unsigned long long)sizes[s], regions, barriers ? ", barriers" : "");
                        failed = 1;
                        continue;
                    }
                    qsort(t, REPS, sizeof t[0], cmp_double);
                    printf("p44,%s%s%s,%u,%llu,%u,%.1f\n", q->name, barriers ? "+barrier" : "",
                           q->valid_bits ? "" : "+hostclock", q->family, (unsigned long long)sizes[s], regions,
                           2.0 * sizes[s] * copies / t[REPS / 2] / 1e9);
                    fflush(stdout);
                }
        }
    vkDeviceWaitIdle(dev);
    printf("# %.1f s from instance to end\n", now_s() - t_start);
    return failed;
}
